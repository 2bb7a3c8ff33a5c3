"""Ignore rules of a workspace: `.gitignore` files (at any depth), then `.greenloopignore`, by git's rules.

Matching is pathspec's `GitIgnoreSpec` (git's wildmatch, the last matching pattern wins, `!` re-includes);
a deeper file's patterns are relative to its folder and override the ones above, and a `.greenloopignore`
overrides the `.gitignore` beside it (so `!generated.py` there brings back a file git ignores). A folder
that is ignored is not entered, so nothing under it comes back, as in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from greenloop_sandbox.values import SandboxError

IGNORE_FILES = (".gitignore", ".greenloopignore")  # read in this order: the later one wins


@dataclass(frozen=True)
class _Rules:
    folder: str  # workspace-relative folder the patterns are relative to ("" for the root)
    spec: pathspec.GitIgnoreSpec


@dataclass
class IgnoreRules:
    """The ignore files read so far, by folder; `ignored(path)` answers for any workspace path."""

    rules: list[_Rules] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the ignore files read (workspace-relative)

    def read_folder(self, root: Path, folder: str) -> None:
        """Add the ignore files of `folder` (workspace-relative, "" for the root), if it has any."""
        for name in IGNORE_FILES:
            path = root / folder / name
            if path.is_file():
                rel = f"{folder}/{name}" if folder else name
                self.rules.append(_Rules(folder, _compile(path, rel)))
                self.sources.append(rel)

    def ignored(self, path: str, *, is_dir: bool = False) -> bool:
        """Whether the workspace-relative posix `path` is ignored (a folder: `is_dir`)."""
        verdict: bool | None = None
        for rules in self.rules:  # root first, then deeper folders: a later answer overrides
            prefix = f"{rules.folder}/" if rules.folder else ""
            if prefix and not path.startswith(prefix):
                continue
            rel = path[len(prefix):] + ("/" if is_dir else "")
            include = rules.spec.check_file(rel).include
            if include is not None:
                verdict = include
        return bool(verdict)


def _compile(path: Path, rel: str) -> pathspec.GitIgnoreSpec:
    """The file's patterns; SandboxError naming the file and line of a pattern git's rules cannot read."""
    try:
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise SandboxError(f"{rel}: unreadable ({exc.strerror}); fix its permissions or remove it.") from exc
    for number, line in enumerate(lines, 1):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, re.error) as exc:
            raise SandboxError(
                f"{rel}, line {number}: {line.strip()!r} is not a pattern greenloop can read ({exc}); "
                "fix or remove that line (a literal '!', '#' or trailing '\\' is escaped with '\\')."
            ) from exc
    return pathspec.GitIgnoreSpec.from_lines(lines)


__all__ = ["IGNORE_FILES", "IgnoreRules"]
