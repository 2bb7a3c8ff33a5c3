"""The packages a python project declares (requirements files, pyproject.toml): installed at once when a module is missing.

A real project rarely lacks one package. PySnooper's tests need four (`requirements.txt` and
`test_requirements.txt`); asked one missing module per round, the loop spent every round on
installs and never reached the code. So the install route's first candidate is the missing
package together with everything the project declares, and its second, asked only when the
first does not install, the missing package alone (a declared pin may not exist for this Python).

Read, at the top of the project: `requirements*.txt`, `*requirements.txt` (`test_requirements.txt`,
`dev-requirements.txt`) and `requirements/*.txt`; pyproject.toml's `[project] dependencies`, its
optional groups and `[dependency-groups]` named for tests or development; setup.py's
`install_requires`, `tests_require` and test `extras_require` where they are literal lists (or a
name bound to one at the top of the file: the file is parsed, never run); setup.cfg's `[options]`
and test extras; tox.ini's `[testenv] deps`; Pipfile's packages. Lines that are options (`-r`,
`-e`, `--index-url`), paths, URLs or tox substitutions are not packages; a requirement whose
environment marker is false here (`pywin32; sys_platform == "win32"`) is left out. What the
sandbox provides (the test runner) or the project is itself is dropped where installs are applied.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib

from packaging.requirements import InvalidRequirement, Requirement

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop_sandbox.packages import normal_name

_FILES = re.compile(r"^(requirements[\w.-]*|[\w.-]*requirements)\.txt$|^requirements/[\w.-]+\.txt$", re.I)
_GROUPS = re.compile(r"^(tests?|testing|dev|develop|development)$", re.I)
_NAMED = {"pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "Pipfile"}
MAX_DECLARED = 60  # more is a pinned environment, not a list of what the code imports


def declared_packages(copy: WorkingCopy) -> list[str]:
    """The project's declared requirements as package specs (`decorator>=4.3.0`), each name once, in the
    order found; [] when it declares none."""
    specs: list[str] = []
    for path in sorted(p for p in copy.paths() if p in _NAMED or _FILES.match(p)):
        text = copy.read(path)  # only the manifests are read: this runs every round, on every file's name
        if text is None:
            continue
        if path == "pyproject.toml":
            specs.extend(_pyproject(text))
        elif path == "setup.py":
            specs.extend(_setup_py(text))
        elif path == "setup.cfg":
            specs.extend(_ini(text, "options", ("install_requires", "tests_require"), "options.extras_require"))
        elif path == "tox.ini":
            specs.extend(_ini(text, "testenv", ("deps",), ""))
        elif path == "Pipfile":
            specs.extend(_pipfile(text))
        else:  # a requirements file (_FILES)
            specs.extend(_requirements_file(text))
    out: dict[str, str] = {}
    for spec in specs:
        if (found := _spec(spec)) is not None:
            out.setdefault(found[0], found[1])
    return list(out.values())[:MAX_DECLARED]


def _requirements_file(text: str) -> list[str]:
    lines = []
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if line and not line.startswith(("-", ".", "/")) and "://" not in line:
            lines.append(line)
    return lines


def _pyproject(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    found_project = data.get("project")
    project: dict[str, object] = found_project if isinstance(found_project, dict) else {}
    found = list(_strings(project.get("dependencies")))
    groups = project.get("optional-dependencies")
    for source in (groups, data.get("dependency-groups")):
        if isinstance(source, dict):
            for name, entries in source.items():
                if _GROUPS.match(str(name)):
                    found.extend(_strings(entries))
    return found


def _setup_py(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    bound: dict[str, list[str]] = {}  # a top-level name bound to a literal list, with its top-level appends
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if (items := _literal(node.value)) is not None:
                bound[node.targets[0].id] = items
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("append", "extend")
              and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id in bound
              and len(node.value.args) == 1):
            arg = node.value.args[0]
            more = _literal(arg) if node.value.func.attr == "extend" else _literal(ast.List(elts=[arg]))
            bound[node.value.func.value.id].extend(more or [])
    found: list[str] = []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for call in calls:
        if getattr(call.func, "id", getattr(call.func, "attr", "")) != "setup":
            continue
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg in ("install_requires", "tests_require"):
                found.extend(_literal(value) or (bound.get(value.id, []) if isinstance(value, ast.Name) else []))
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for key, entries in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant) and _GROUPS.match(str(key.value)):
                        found.extend(_literal(entries) or [])
    return found


def _literal(node: ast.expr) -> list[str] | None:
    """A list or tuple of string constants, None for anything else."""
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                       for e in node.elts):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _ini(text: str, section: str, keys: tuple[str, ...], groups: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    values = [parser.get(section, key, fallback="") for key in keys]
    if groups and parser.has_section(groups):
        values.extend(v for k, v in parser.items(groups) if _GROUPS.match(k))
    lines = [line.strip() for value in values for line in value.splitlines()]
    return [line for line in _requirements_file("\n".join(lines)) if "{" not in line and not re.match(r"^[\w,-]+:", line)]


def _pipfile(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    found = []
    for table in ("packages", "dev-packages"):
        for name, version in (data.get(table) or {}).items():
            found.append(name + (version if isinstance(version, str) and version != "*" else ""))
    return found


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _spec(text: str) -> tuple[str, str] | None:
    """(normal name, spec without its marker) for a requirement that applies here; None otherwise."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.url or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
        return None
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return normal_name(req.name), f"{req.name}{extras}{req.specifier}"
