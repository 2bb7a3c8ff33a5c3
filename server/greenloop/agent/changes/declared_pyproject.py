"""The requirements a pyproject.toml declares, in each build backend's and tool's own table, as PEP 508 lines.

Read: `[project]` dependencies and optional groups (PEP 621), `[dependency-groups]` (PEP 735, with
`include-group`), setuptools' `[tool.setuptools.dynamic]` files; flit's old `[tool.flit.metadata]`
`requires`, `requires-extra` and `dev-requires`; poetry's `[tool.poetry.dependencies]`,
`dev-dependencies` and `[tool.poetry.group.<name>.dependencies]` (its `^`, `~` and `*` constraints turned
into PEP 440); pdm's `[tool.pdm.dev-dependencies]`; uv's `[tool.uv] dev-dependencies`; hatch's `default`
and test environments' `dependencies` and `extra-dependencies`. A group is read when `wanted` accepts its
name (test and development groups); git, path and URL sources are no packages of an index and are left out.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

Read = Callable[[str], str | None]
RequirementLines = Callable[[str], list[str]]
_HATCH_TEST = "hatch-test"  # the environment `hatch test` runs in


def pyproject_requirements(text: str, lines_of: RequirementLines, wanted: Callable[[str], bool]) -> list[str]:
    """Every requirement line the file declares for the project and its wanted groups; [] when it does not parse."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    tool = _table(data, "tool")
    found = _pep621(_table(data, "project"), _table(tool, "setuptools"), lines_of, wanted)
    found += _dependency_groups(_table(data, "dependency-groups"), wanted)
    flit = _table(tool, "flit", "metadata")
    found += _strings(flit.get("requires")) + _strings(flit.get("dev-requires"))
    found += _groups(_table(flit, "requires-extra"), wanted)
    found += _poetry(_table(tool, "poetry"), wanted)
    found += _groups(_table(tool, "pdm", "dev-dependencies"), wanted)
    found += _strings(_table(tool, "uv").get("dev-dependencies"))
    for name, env in _table(tool, "hatch", "envs").items():
        if isinstance(env, dict) and (name in ("default", _HATCH_TEST) or wanted(name)):
            found += _strings(env.get("dependencies")) + _strings(env.get("extra-dependencies"))
    return found


def _pep621(project: dict[str, Any], setuptools: dict[str, Any], lines_of: RequirementLines,
            wanted: Callable[[str], bool]) -> list[str]:
    found = _strings(project.get("dependencies")) + _groups(_table(project, "optional-dependencies"), wanted)
    dynamic = _table(setuptools, "dynamic")  # dependencies = {file = ["requirements.txt"]} when [project] says dynamic
    found += _files(dynamic.get("dependencies"), lines_of)
    for name, entry in _table(dynamic, "optional-dependencies").items():
        if wanted(name):
            found += _files(entry, lines_of)
    return found


def _dependency_groups(groups: dict[str, Any], wanted: Callable[[str], bool]) -> list[str]:
    found: list[str] = []

    def add(name: str, depth: int) -> None:
        for entry in groups.get(name, []) if depth < 5 and isinstance(groups.get(name), list) else []:
            if isinstance(entry, str):
                found.append(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
                add(entry["include-group"], depth + 1)

    for name in groups:
        if wanted(name):
            add(name, 0)
    return found


def _poetry(poetry: dict[str, Any], wanted: Callable[[str], bool]) -> list[str]:
    tables = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
    tables += [_table(group, "dependencies") for name, group in _table(poetry, "group").items()
               if isinstance(group, dict) and wanted(name)]
    found: list[str] = []
    for table in tables:
        for name, entry in table.items():
            if name.lower() == "python":
                continue  # the Python version, no package
            if (line := _poetry_line(name, entry)) is not None:
                found.append(line)
    return found


def _poetry_line(name: str, entry: object) -> str | None:
    """One poetry dependency as a PEP 508 line; None for an optional one or one not from an index."""
    if isinstance(entry, list):  # several constraints by python version: the first whose marker holds is pip's
        entry = entry[0] if entry else "*"
    if isinstance(entry, dict):
        if entry.get("optional") or any(key in entry for key in ("git", "path", "url", "file")):
            return None
        extras = [str(e) for e in entry.get("extras", []) if isinstance(e, str)]
        name += f"[{','.join(extras)}]" if extras else ""
        entry = entry.get("version", "*")
    return name + poetry_constraint(str(entry))


def poetry_constraint(constraint: str) -> str:
    """A poetry version constraint in PEP 440 terms: `^1.2` -> `>=1.2,<2.0.0`, `~1.2` -> `>=1.2,<1.3.0`, `1.2` ->
    `==1.2`, `*` -> ``; a constraint with alternatives (`||`) or that does not read gives `` (any version)."""
    if "||" in constraint or " | " in constraint:
        return ""
    out: list[str] = []
    for item in (s.strip() for s in constraint.replace(", ", ",").split(",")):
        item = item.replace(" ", "")
        if item in ("", "*"):
            continue
        if item.startswith("^") or (item.startswith("~") and not item.startswith("~=")):
            out.append(_range(item[1:], caret=item.startswith("^")))
        elif item[0] in "<>=!~":
            out.append(item)
        else:
            out.append(f"=={item}")
    spec = ",".join(out)
    try:
        return str(SpecifierSet(spec)) if spec else ""
    except InvalidSpecifier:
        return ""


def _range(version: str, *, caret: bool) -> str:
    """`^`: up to the next change of the first non-zero part; `~`: of the minor (the major when only it is given)."""
    parts = [p for p in version.split(".") if p]
    numbers = [int(p) if p.isdigit() else 0 for p in parts]
    if caret:
        at = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
    else:
        at = min(1, len(numbers) - 1)
    at = max(0, min(at, len(numbers) - 1))
    upper = [*numbers[:at], numbers[at] + 1] + [0] * max(0, 2 - at)
    return f">={version},<{'.'.join(str(n) for n in upper)}"


def _groups(table: dict[str, Any], wanted: Callable[[str], bool]) -> list[str]:
    return [line for name, entries in table.items() if wanted(name) for line in _strings(entries)]


def _files(entry: object, lines_of: RequirementLines) -> list[str]:
    files = entry.get("file") if isinstance(entry, dict) else None
    names = [files] if isinstance(files, str) else _strings(files)
    return [line for name in names for line in lines_of(name)]


def _table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        found = data.get(key)
        data = found if isinstance(found, dict) else {}
    return data


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
