"""WorkingCopy: the workspace's files in memory (disk + unsaved buffers), edited instead of the disk."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from greenloop.agent.changes.same_code import file_key
from greenloop.agent.changes.text import BOM, decode_text, encode_like, lf_lines, not_text_reason
from greenloop.agent.events import ChangeSet, FileChange
from greenloop.agent.ports import read_workspace

__all__ = ["WorkingCopy", "decode_text"]


class WorkingCopy:
    """Files by workspace-relative posix path; remembers the base to diff against.

    `read` gives the text to work on ("\n" endings, no BOM); `write` puts text back in the
    file's own format (its BOM, its endings on kept lines, its dominant ending on new ones),
    so every writer keeps a file's bytes outside the lines it changed.
    """

    def __init__(self, root: Path, files: Mapping[str, bytes]) -> None:
        self.root = root
        self._base: dict[str, bytes] = dict(files)
        self._files: dict[str, bytes] = dict(files)

    @classmethod
    def from_workspace(cls, root: Path, overlays: Mapping[str, str] | None = None) -> WorkingCopy:
        files = read_workspace(root)
        for path, text in (overlays or {}).items():
            if path not in files and files.ignore.ignored(path):
                continue  # an unsaved buffer of a file the ignore files leave out stays out too
            on_disk = files.get(path, b"")
            # an editor shows a BOM as the file's encoding, not as text: keep the one on disk
            files[path] = (BOM if on_disk.startswith(BOM) and not text.startswith("\ufeff") else b"") + text.encode()
        return cls(root, files)

    @classmethod
    def empty(cls, root: Path) -> WorkingCopy:
        return cls(root, {})

    def read(self, path: str) -> str | None:
        """The file's text ("\n" endings, no BOM); None when missing, binary or not UTF-8."""
        data = self._files.get(path)
        return None if data is None else decode_text(data)

    def original(self, path: str) -> str | None:
        """The file's text as the run found it (as `read` gives it); None when it had none, or not text."""
        data = self._base.get(path)
        return None if data is None else decode_text(data)

    def why_not_text(self, path: str) -> str | None:
        """Why an existing file cannot be edited as text (binary, not UTF-8), or None."""
        data = self._files.get(path)
        return None if data is None else not_text_reason(data)

    def exists(self, path: str) -> bool:
        return path in self._files

    def write(self, path: str, text: str) -> None:
        """Set the file's text (any endings), kept in the file's format: see `agent.text.encode_like`."""
        self._files[path] = encode_like(self._files.get(path), text)

    def delete(self, path: str) -> None:
        self._files.pop(path, None)

    def files(self) -> dict[str, bytes]:
        return dict(self._files)

    def restore(self, files: Mapping[str, bytes]) -> None:
        """Go back to an earlier `files()` (an attempt that made things worse is undone)."""
        self._files = dict(files)

    def fork(self) -> WorkingCopy:
        """A copy to try a candidate on: same base, same files; changing it leaves this one as it is."""
        twin = WorkingCopy(self.root, self._base)
        twin._files = dict(self._files)
        return twin

    def paths(self) -> list[str]:
        return sorted(self._files)

    def deleted(self) -> frozenset[str]:
        return frozenset(self._base) - frozenset(self._files)

    def fingerprint(self) -> int:
        """Changes whenever any file's content changes."""
        return hash(frozenset(self._files.items()))

    def code_fingerprint(self) -> int:
        """Changes whenever any file's code changes: python files with the same syntax trees (a comment, spacing,
        quote style aside) count as the same, so a candidate written otherwise is the change tested already."""
        return hash(frozenset((path, file_key(path, data, self._base.get(path))) for path, data in self._files.items()))

    def changed_paths(self) -> list[str]:
        paths = set(self._base) | set(self._files)
        return sorted(p for p in paths if self._base.get(p) != self._files.get(p))

    def changes(self, packages: list[str] | None = None, commands: list[str] | None = None) -> ChangeSet:
        """The change set against the base: per-file before/after text and a unified diff."""
        files: list[FileChange] = []
        diff: list[str] = []
        for path in self.changed_paths():
            before_b, after_b = self._base.get(path), self._files.get(path)
            before = None if before_b is None else _exact(before_b)
            after = None if after_b is None else _exact(after_b)
            files.append(FileChange(path=path, before=before, after=after))
            diff.extend(
                difflib.unified_diff(
                    lf_lines(before or ""),
                    lf_lines(after or ""),
                    fromfile="/dev/null" if before is None else f"a/{path}",
                    tofile="/dev/null" if after is None else f"b/{path}",
                )
            )
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
        return ChangeSet(files=files, packages=list(packages or []), commands=list(commands or []), diff=text)


def _exact(data: bytes) -> str:
    """A changed file's text exactly as its bytes hold it (BOM, CRLF); "" for binary or non-UTF-8 files."""
    return data.decode("utf-8") if not_text_reason(data) is None else ""
