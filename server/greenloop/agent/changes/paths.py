"""Workspace path safety: every path an action names must stay inside the workspace."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path, PurePosixPath

from greenloop.errors import GreenloopError

_PLACEHOLDER = re.compile(r"<[^<>/]*>")
# Folders no plan may write into.
_PROTECTED = (".git", ".greenloop")


class UnsafePath(GreenloopError):
    """A path that would escape the workspace or touch a protected folder."""


def safe_relpath(root: Path, path: str, aliases: tuple[str, ...] = ()) -> str:
    """Normalize `path` to a workspace-relative posix path, or raise UnsafePath.

    Refuses absolute paths, `..` that leaves the root, protected folders, `<placeholders>`, and
    paths that resolve (through a symlink on disk) to somewhere outside `root`. An absolute path
    under one of `aliases` (the workspace root as the sandbox sees it: `/workspace` in Docker)
    names the file under the workspace: the 0.5B model copied `/workspace/roman.py` from a traceback.
    """
    raw = path.strip().replace("\\", "/")
    if not raw:
        raise UnsafePath("empty path")
    for alias in aliases:
        prefix = alias.rstrip("/") + "/"
        if raw.startswith(prefix) and raw != prefix:
            raw = raw[len(prefix):]
            break
    if raw.startswith("/") or PurePosixPath(raw).is_absolute() or (len(raw) > 1 and raw[1] == ":"):
        raise UnsafePath(f"{path!r} is absolute; use a path relative to the workspace root")
    if _PLACEHOLDER.search(raw):  # small models copy the `<file>` of the prompts' action shapes
        raise UnsafePath(f"{path!r} is a placeholder from the instructions; name the real file")
    norm = posixpath.normpath(raw)
    if norm == "." or norm.startswith("../") or norm == "..":
        raise UnsafePath(f"{path!r} escapes the workspace")
    if norm.split("/", 1)[0] in _PROTECTED:
        raise UnsafePath(f"{path!r} is inside {norm.split('/', 1)[0]}/, which greenloop never writes")
    resolved_root = root.resolve()
    target = (resolved_root / norm).resolve()
    if target != resolved_root and resolved_root not in target.parents:
        raise UnsafePath(f"{path!r} resolves outside the workspace (through a symlink)")
    return norm
