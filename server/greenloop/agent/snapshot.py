"""Snapshot: the workspace's files in memory (disk + unsaved buffers), edited instead of the disk."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from greenloop.agent.events import ChangeSet, FileChange
from greenloop_sandbox import read_tree


def decode_text(data: bytes) -> str | None:
    """UTF-8 text, or None for binary content."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class Snapshot:
    """Files by workspace-relative posix path; remembers the base to diff against."""

    def __init__(self, root: Path, files: Mapping[str, bytes]) -> None:
        self.root = root
        self._base: dict[str, bytes] = dict(files)
        self._files: dict[str, bytes] = dict(files)

    @classmethod
    def from_workspace(cls, root: Path, overlays: Mapping[str, str] | None = None) -> Snapshot:
        files = read_tree(root)
        for path, text in (overlays or {}).items():
            files[path] = text.encode("utf-8")
        return cls(root, files)

    @classmethod
    def empty(cls, root: Path) -> Snapshot:
        return cls(root, {})

    def read(self, path: str) -> str | None:
        data = self._files.get(path)
        return None if data is None else decode_text(data)

    def exists(self, path: str) -> bool:
        return path in self._files

    def write(self, path: str, text: str) -> None:
        self._files[path] = text.encode("utf-8")

    def delete(self, path: str) -> None:
        self._files.pop(path, None)

    def files(self) -> dict[str, bytes]:
        return dict(self._files)

    def restore(self, files: Mapping[str, bytes]) -> None:
        """Go back to an earlier `files()` (an attempt that made things worse is undone)."""
        self._files = dict(files)

    def fork(self) -> Snapshot:
        """A copy to try a candidate on: same base, same files; changing it leaves this one as it is."""
        twin = Snapshot(self.root, self._base)
        twin._files = dict(self._files)
        return twin

    def paths(self) -> list[str]:
        return sorted(self._files)

    def deleted(self) -> frozenset[str]:
        return frozenset(self._base) - frozenset(self._files)

    def fingerprint(self) -> int:
        """Changes whenever any file's content changes."""
        return hash(frozenset(self._files.items()))

    def changed_paths(self) -> list[str]:
        paths = set(self._base) | set(self._files)
        return sorted(p for p in paths if self._base.get(p) != self._files.get(p))

    def changes(self, packages: list[str] | None = None, commands: list[str] | None = None) -> ChangeSet:
        """The change set against the base: per-file before/after text and a unified diff."""
        files: list[FileChange] = []
        diff: list[str] = []
        for path in self.changed_paths():
            before_b, after_b = self._base.get(path), self._files.get(path)
            before = None if before_b is None else (decode_text(before_b) or "")
            after = None if after_b is None else (decode_text(after_b) or "")
            files.append(FileChange(path=path, before=before, after=after))
            diff.extend(
                difflib.unified_diff(
                    (before or "").splitlines(keepends=True),
                    (after or "").splitlines(keepends=True),
                    fromfile="/dev/null" if before is None else f"a/{path}",
                    tofile="/dev/null" if after is None else f"b/{path}",
                )
            )
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
        return ChangeSet(files=files, packages=list(packages or []), commands=list(commands or []), diff=text)
