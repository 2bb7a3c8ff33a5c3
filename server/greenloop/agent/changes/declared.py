"""The packages a python project declares (requirements files, pyproject.toml): installed at once when a module is missing.

A real project rarely lacks one package. PySnooper's tests need four (`requirements.txt` and
`test_requirements.txt`); asked one missing module per round, the loop spent every round on
installs and never reached the code. So the install route's first candidate is the missing
package together with everything the project declares, and its second, asked only when the
first does not install, the missing package alone (a declared pin may not exist for this Python).

Read, at the top of the project: `requirements*.txt`, `*requirements.txt` (`test_requirements.txt`,
`dev-requirements.txt`) and `requirements/*.txt`, each with the files it includes (`-r other.txt`, as
pip does); pyproject.toml's tables of every common backend and tool (declared_pyproject.py: PEP 621,
flit, poetry, pdm, uv, hatch, setuptools' dynamic files); setup.py's `setup()` keywords as its syntax
tree builds them (declared_setup_py.py: the file is parsed, never run); setup.cfg's `[options]` and
test extras (`file:` included); tox.ini's `[testenv] deps` with their `{[section]deps}` substitutions
and `-r` files; Pipfile's packages. A group (extra, dependency group) is read when it is named for tests
or development, or tox.ini's `[testenv] extras` names it. Lines that are options (`-e`, `-c`,
`--index-url`), paths, URLs or tox's other substitutions are not packages; a requirement whose
environment marker is false here (`pywin32; sys_platform == "win32"`) is left out. What the
sandbox provides (the test runner) or the project is itself is dropped where installs are applied.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable

from packaging.requirements import InvalidRequirement, Requirement

from greenloop.agent.changes.declared_pyproject import pyproject_requirements
from greenloop.agent.changes.declared_setup_py import Read, setup_py_requirements
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop_sandbox.packages import normal_name

REQUIREMENT_FILES = re.compile(r"^(requirements[\w.-]*|[\w.-]*requirements)\.txt$|^requirements/[\w.-]+\.txt$", re.I)
_GROUPS = re.compile(r"^(tests?|testing|dev|develop|development)$", re.I)
_NAMED = {"pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "Pipfile"}
_FACTOR = re.compile(r"^!?[\w{},.!-]+:(\s|$)")  # tox's `py27: mock`: a line for some environments only
_INCLUDE = re.compile(r"^(-r|--requirement)[\s=]*(?P<path>[^\s=]\S*)$")
_TOX_SUBSTITUTION = re.compile(r"\{\[(?P<section>[^\]]+)\](?P<key>[\w-]+)\}")
MAX_DECLARED = 60  # more is a pinned environment, not a list of what the code imports
MAX_INCLUDED = 20  # requirements files read through `-r` from one file, and tox substitutions' depth


def declared_packages(copy: WorkingCopy) -> list[str]:
    """The project's declared requirements as package specs (`decorator>=4.3.0`), each name once, in the
    order found; [] when it declares none."""
    read = copy.read  # only the manifests and the files they name are read: this runs every round

    def lines_of(path: str) -> list[str]:
        return requirement_lines(read, path)

    extras = _tox_extras(read("tox.ini") or "") if "tox.ini" in copy.paths() else set()

    def wanted(group: str) -> bool:
        return bool(_GROUPS.match(group)) or normal_name(group) in extras

    specs: list[str] = []
    for path in sorted(p for p in copy.paths() if p in _NAMED or REQUIREMENT_FILES.match(p)):
        text = read(path)
        if text is None:
            continue
        if path == "pyproject.toml":
            specs.extend(pyproject_requirements(text, lines_of, wanted))
        elif path == "setup.py":
            specs.extend(setup_py_requirements(text, read, lines_of, wanted))
        elif path == "setup.cfg":
            specs.extend(_setup_cfg(text, lines_of, wanted))
        elif path == "tox.ini":
            specs.extend(_tox(text, read))
        elif path == "Pipfile":
            specs.extend(_pipfile(text))
        else:  # a requirements file (REQUIREMENT_FILES)
            specs.extend(lines_of(path))
    out: dict[str, Requirement] = {}
    for spec in specs:  # the first range found for a name is kept, with every file's extras of it (pip's union)
        if (found := _spec(spec)) is not None:
            out.setdefault(normal_name(found.name), found).extras.update(found.extras)
    return [_text(req) for req in out.values()][:MAX_DECLARED]


def requirement_lines(read: Read, path: str) -> list[str]:
    """The requirement lines of a requirements file and of the files it includes (`-r other.txt`, relative to
    it, inside the workspace), as pip reads them: options, paths, URLs and comments are not requirements."""
    seen: set[str] = set()

    def lines(name: str) -> list[str]:
        if name in seen or len(seen) > MAX_INCLUDED or (text := read(name)) is None:
            return []
        seen.add(name)
        return _requirement_text(text, lambda included: lines(_relative(name, included)))

    return lines(posixpath.normpath(path))


def _requirement_text(text: str, include: Callable[[str], list[str]]) -> list[str]:
    out: list[str] = []
    for raw in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if (included := _INCLUDE.match(line)) is not None:
            out.extend(include(included.group("path")))
        elif line and not line.startswith(("-", ".", "/")) and "://" not in line:
            out.append(re.split(r"\s--[a-z]", line, maxsplit=1)[0].strip())  # `--hash=...` and other options
    return out


def _relative(including: str, included: str) -> str:
    """`included` as a workspace path, relative to the folder of the file that names it; "" outside the workspace."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(including), included))
    return "" if path.startswith("..") or path.startswith("/") else path


def _ini(text: str) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _setup_cfg(text: str, lines_of: Callable[[str], list[str]], wanted: Callable[[str], bool]) -> list[str]:
    parser = _ini(text)
    if parser is None:
        return []
    values = [parser.get("options", key, fallback="") for key in ("install_requires", "tests_require")]
    if parser.has_section("options.extras_require"):
        values.extend(v for k, v in parser.items("options.extras_require") if wanted(k))
    found: list[str] = []
    for value in values:
        if value.strip().startswith("file:"):  # `install_requires = file: requirements.txt` (setuptools >= 62.6)
            found.extend(line for name in re.split(r"[\s,]+", value.strip()[5:]) if name for line in lines_of(name))
        else:
            found.extend(_requirement_text(value, lambda _: []))
    return found


def _tox(text: str, read: Read) -> list[str]:
    """`[testenv] deps` with `{[section]key}` substituted as tox does and `-r` files read; factor lines left out."""
    parser = _ini(text)
    if parser is None:
        return []

    def expand(value: str, depth: int) -> str:
        def one(match: re.Match[str]) -> str:
            inner = parser.get(match.group("section"), match.group("key"), fallback="")
            return expand(inner, depth + 1) if depth < MAX_INCLUDED else ""
        return _TOX_SUBSTITUTION.sub(one, value)

    deps = expand(parser.get("testenv", "deps", fallback=""), 0).replace("{toxinidir}/", "")
    lines = [line.strip() for line in deps.splitlines() if not _FACTOR.match(line.strip())]
    found = _requirement_text("\n".join(lines), lambda path: requirement_lines(read, path))
    return [line for line in found if "{" not in line]


def _tox_extras(text: str) -> set[str]:
    """The extras tox installs the project with (`[testenv] extras = test, http3`), as normal names."""
    parser = _ini(text)
    value = parser.get("testenv", "extras", fallback="") if parser is not None else ""
    names = (n.strip() for line in value.splitlines() if not _FACTOR.match(line.strip()) for n in line.split(","))
    return {normal_name(n) for n in names if n and "{" not in n}


def _pipfile(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    found = []
    for table in ("packages", "dev-packages"):
        for name, version in (data.get(table) or {}).items():
            if isinstance(version, dict):
                if any(key in version for key in ("git", "path", "file", "url")):
                    continue  # not from an index (often the project itself)
                version = version.get("version", "*")
            found.append(name + (version if isinstance(version, str) and version != "*" else ""))
    return found


def _spec(text: str) -> Requirement | None:
    """The requirement without its marker when it applies here; None otherwise."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.url or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
        return None
    req.marker = None
    return req


def _text(req: Requirement) -> str:
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"
