"""The packages a python project declares (requirements files, pyproject.toml): installed at once when a module is missing.

A real project rarely lacks one package. PySnooper's tests need four (`requirements.txt` and
`test_requirements.txt`); asked one missing module per round, the loop spent every round on
installs and never reached the code. So the install route's first candidate is the missing
package together with everything the project declares, and its second, asked only when the
first does not install, the missing package alone (a declared pin may not exist for this Python).

Read: `requirements*.txt`, `*requirements.txt` (`test_requirements.txt`, `dev-requirements.txt`)
and `requirements/*.txt` at the top of the project; pyproject.toml's `[project] dependencies`,
its optional groups and `[dependency-groups]` named for tests or development. Lines that are
options (`-r`, `-e`, `--index-url`), paths or URLs are not packages; a requirement whose
environment marker is false here (`pywin32; sys_platform == "win32"`) is left out. What the sandbox
provides (the test runner) or the project is itself is dropped where installs are applied.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop_sandbox.packages import normal_name

_FILES = re.compile(r"^(requirements[\w.-]*|[\w.-]*requirements)\.txt$|^requirements/[\w.-]+\.txt$", re.I)
_GROUPS = re.compile(r"^(tests?|testing|dev|develop|development)$", re.I)
MAX_DECLARED = 60  # more is a pinned environment, not a list of what the code imports


def declared_packages(copy: WorkingCopy) -> list[str]:
    """The project's declared requirements as package specs (`decorator>=4.3.0`), each name once, in the
    order found; [] when it declares none."""
    specs: list[str] = []
    for path in sorted(copy.paths()):
        text = copy.read(path)
        if text is None:
            continue
        if path == "pyproject.toml":
            specs.extend(_pyproject(text))
        elif _FILES.match(path) and len(PurePosixPath(path).parts) <= 2:
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
