"""Places a test report names (traceback frames, file paths) matched to the workspace's own paths."""

from __future__ import annotations

import re
from collections.abc import Collection

# a traceback frame: pytest's `path:line:`, python's `File "path", line N`
FRAME = re.compile(r'^([\w./-]+\.\w+):(\d+):|File "([^"]+)", line (\d+)', re.M)


def frames(traceback: str) -> list[tuple[str, int]]:
    """(path, line) of each frame, outermost first, with paths as the report wrote them."""
    return [(m.group(1) or m.group(3), int(m.group(2) or m.group(4))) for m in FRAME.finditer(traceback)]


def known_path(paths: Collection[str], path: str | None) -> str:
    """The workspace path a reported path means (relative, or absolute inside the sandbox); "" for none."""
    if not path:
        return ""
    path = path.lstrip("./")
    if path in paths:
        return path
    return next((known for known in paths if path.endswith("/" + known)), "")
