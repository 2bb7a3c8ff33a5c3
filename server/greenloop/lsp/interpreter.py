"""`greenloop/interpreterPackages`: the editor's interpreter's installed versions, kept for the next fix run.

The extension runs `pip list --format json` in the user's active interpreter (with a time limit) and sends
only names and versions; nothing runs in that interpreter beyond the listing. The environment step pins
the project's declared packages to these versions (agent/environment/sources.py). A listing the extension
could not make (timed out, no pip) is kept as its reason, which the step says as a line.
"""

from __future__ import annotations

import re

from greenloop.lsp import protocol as p
from greenloop.lsp.server import GreenloopServer

MAX_PACKAGES = 2000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}$")


def register(server: GreenloopServer) -> None:
    server.feature(p.INTERPRETER_PACKAGES)(interpreter_packages)


def interpreter_packages(ls: GreenloopServer, params: p.InterpreterPackagesParams) -> None:
    """Keep the listing (names and versions that look like a package's, at most MAX_PACKAGES); log its reason."""
    if params.error:
        ls.interpreter_packages = {}
        ls.interpreter_note = f"the editor's interpreter ({params.interpreter}): no listing, {params.error[:200]}"
        ls.log_line(ls.interpreter_note)
        return
    ls.interpreter_packages = {pkg.name: pkg.version for pkg in params.packages[:MAX_PACKAGES]
                               if _NAME.match(pkg.name) and _VERSION.match(pkg.version)}
    ls.interpreter_note = ""
    ls.log_line(f"the editor's interpreter ({params.interpreter}): {len(ls.interpreter_packages)} packages listed")
