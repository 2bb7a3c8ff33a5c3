"""`greenloop/interpreterPackages`: the editor's interpreter's installed versions, kept for the next fix run.

The extension runs `pip list --format json` in the user's active interpreter (with a time limit) when the
server starts and again whenever the user picks another interpreter, and sends only names and versions;
nothing runs in that interpreter beyond the listing. The environment step pins the project's declared
packages to these versions (agent/environment/sources.py). Each listing replaces the one before for the
runs that start after it; a run already going keeps the one it started with (server.EditorInterpreter).
A listing the extension could not make (timed out, no pip) is kept as its reason, which the step says as a line.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from greenloop.lsp import protocol as p
from greenloop.lsp.server import EditorInterpreter, GreenloopServer

MAX_PACKAGES = 2000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}$")


def register(server: GreenloopServer) -> None:
    server.feature(p.INTERPRETER_PACKAGES)(interpreter_packages)


def interpreter_packages(ls: GreenloopServer, params: p.InterpreterPackagesParams) -> None:
    """Keep the listing (names and versions that look like a package's, at most MAX_PACKAGES) in place of the last
    one; log it, or its reason."""
    if params.error:
        note = f"the editor's interpreter ({params.interpreter[:300]}): no listing, {params.error[:200]}"
        ls.interpreter = EditorInterpreter(note=note)
    else:
        packages = {pkg.name: pkg.version for pkg in params.packages[:MAX_PACKAGES]
                    if _NAME.match(pkg.name) and _VERSION.match(pkg.version)}
        note = f"the editor's interpreter ({params.interpreter[:300]}): {len(packages)} packages listed"
        ls.interpreter = EditorInterpreter(MappingProxyType(packages), note)
    ls.log_line(note)
