"""The sandbox's test tool's own requirements: a project's pin outside them is not installed over the image's copy.

A project that does not pin its test tool gets the sandbox's (pytest 7.2.1 here), and that pytest needs
`attrs>=19.2.0`. An older project's lock file pins the attrs of its day (black's Pipfile.lock: attrs 17.4
to 19.1); installed over the image's, it stops pytest before any test ran (`attrs() got an unexpected
keyword argument 'eq'`), and the loop would be left with a run that says nothing about the code. So a
pinned version (`==`) of a distribution the tool requires, outside the tool's range, is left out, said in
a line, and the image's copy stays; the project's own code gets a release the tool also accepts. A project
that pins the test tool itself gets its own tool's requirements through its lock, and nothing is left out.
"""

from __future__ import annotations

import json

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from greenloop_sandbox.packages import normal_name

# run in the sandbox: the test tool's distribution's requirements (nothing of it is imported)
REQUIRES = ("import importlib.metadata as md, json, sys\n"
            "try:\n    print(json.dumps([md.version(sys.argv[1]), md.requires(sys.argv[1]) or []]))\n"
            "except md.PackageNotFoundError:\n    print('[]')")


def read(output: str, python: str) -> tuple[str, dict[str, Requirement]]:
    """The tool's version and its requirements that apply on `python` (normal name -> requirement), from the
    sandbox's `REQUIRES` output; ("", {}) when it cannot be read."""
    for line in output.splitlines():
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if not (isinstance(found, list) and len(found) == 2 and isinstance(found[1], list)):
            continue
        environment = {k: str(v) for k, v in default_environment().items()}
        environment |= {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}
        requires: dict[str, Requirement] = {}
        for text in found[1]:
            try:
                req = Requirement(str(text))
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate(environment):
                requires[normal_name(req.name)] = req
        return str(found[0]), requires
    return "", {}


def outside(spec: str, requires: dict[str, Requirement]) -> Requirement | None:
    """The tool's requirement that `spec`'s pinned version (`==`) is outside; None for another spec."""
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return None
    pinned = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    needed = requires.get(normal_name(req.name))
    if not pinned or needed is None or not str(needed.specifier):
        return None
    try:
        Version(pinned[0])
    except InvalidVersion:
        return None
    return None if needed.specifier.contains(pinned[0], prereleases=True) else needed
