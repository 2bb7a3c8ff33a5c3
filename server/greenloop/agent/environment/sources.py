"""Where a project's package versions come from, in order: its lock file, its pinned requirements files, the
editor's interpreter, its declared ranges.

Each source gives the specs to install (`Pins`) or the reason it gives none; the environment step
(step.py) installs the first that gives some and installs, and says why it passed over the others.
The editor's interpreter listing (`pip list` run by the extension in the user's interpreter) only pins
the packages the project declares: it never adds a package.
"""

from __future__ import annotations

from collections.abc import Mapping

from packaging.requirements import InvalidRequirement, Requirement

from greenloop.agent.changes.declared import REQUIREMENT_FILES, declared_packages, requirement_lines
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.locks import LOCK_FILES, Pins, read_lock
from greenloop_sandbox.packages import normal_name, package_name

EDITOR = "the editor's interpreter"
DECLARED = "declared ranges"


def version_sources(copy: WorkingCopy, python: str, interpreter: Mapping[str, str] | None = None) -> list[Pins]:
    """Every source in order, each with its specs or the reason it has none (only sources the project has)."""
    found: list[Pins] = []
    paths = set(copy.paths())
    for name in LOCK_FILES:
        if name in paths and (text := copy.read(name)) is not None:
            found.append(read_lock(name, text, python))
    pinned = _pinned_requirements(copy, sorted(p for p in paths if REQUIREMENT_FILES.match(p)))
    if pinned is not None:
        found.append(pinned)
    declared = declared_packages(copy)
    if interpreter:
        found.append(_from_interpreter(declared, interpreter))
    if declared:
        found.append(Pins(DECLARED, tuple(declared)))
    return found


def _pinned_requirements(copy: WorkingCopy, paths: list[str]) -> Pins | None:
    """The requirements files' specs when every one of them pins a version (`==`); None when there are none."""
    specs: list[str] = []
    for path in paths:
        specs.extend(requirement_lines(copy.read, path))  # with the files it includes (`-r base.txt`)
    if not specs:
        return None
    label = ", ".join(paths)
    try:
        loose = [s for s in specs if not any(sp.operator in ("==", "===") for sp in Requirement(s).specifier)]
    except InvalidRequirement as exc:
        return Pins(label, reason=f"{label} has a line that is no requirement ({exc})")
    if loose:
        return Pins(label, reason=f"{label} pins no version for {', '.join(loose[:3])}")
    conflicts = _conflicts(specs)
    if conflicts:
        return Pins(label, reason=f"{label} pin {conflicts} twice, to different versions")
    return Pins(label, tuple(dict.fromkeys(specs)))


def _conflicts(specs: list[str]) -> str:
    seen: dict[str, str] = {}
    for spec in specs:
        name = package_name(spec)
        pinned = str(Requirement(spec).specifier)
        if seen.setdefault(name, pinned) != pinned:
            return name
    return ""


def _from_interpreter(declared: list[str], interpreter: Mapping[str, str]) -> Pins:
    """The declared packages at the versions the editor's interpreter has (the others as declared)."""
    versions = {normal_name(k): v for k, v in interpreter.items()}
    if not declared:
        return Pins(EDITOR, reason="the project declares no package for the interpreter's versions to pin")
    specs, pinned = [], 0
    for spec in declared:
        version = versions.get(package_name(spec))
        if version:
            try:
                name = Requirement(spec).name
            except InvalidRequirement:
                continue
            specs.append(f"{name}=={version}")
            pinned += 1
        else:
            specs.append(spec)
    if not pinned:
        return Pins(EDITOR, reason="the editor's interpreter has none of the declared packages installed")
    return Pins(EDITOR, tuple(specs))
