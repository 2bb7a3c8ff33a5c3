"""Test helper: apply an LSP WorkspaceEdit to files on disk, as an editor would after the user accepts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path


def offset_of(text: str, position: types.Position) -> int:
    """A UTF-16 LSP position -> index into `text` (past-the-end positions clamp to the end)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)  # LSP's line ends (not a form feed)
    if position.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position.line])
    units = 0
    for index, char in enumerate(lines[position.line]):
        if units >= position.character:
            return start + index
        units += len(char.encode("utf-16-le")) // 2
    return start + len(lines[position.line])


def apply_text_edits(text: str, edits: list[Any]) -> str:
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    for edit in ordered:
        start, end = offset_of(text, edit.range.start), offset_of(text, edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit) -> list[Path]:
    """Write the edit to disk; returns the files touched."""
    touched: list[Path] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri) or "")
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("", encoding="utf-8")
        elif isinstance(change, types.DeleteFile):
            Path(to_fs_path(change.uri) or "").unlink(missing_ok=True)
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(to_fs_path(change.text_document.uri) or "")
            before = _read(path) if path.exists() else ""
            path.parent.mkdir(parents=True, exist_ok=True)
            _write(path, apply_text_edits(before, list(change.edits)))
        touched.append(path)
    for uri, edits in (edit.changes or {}).items():
        path = Path(to_fs_path(uri) or "")
        _write(path, apply_text_edits(_read(path), list(edits)))
        touched.append(path)
    return touched


def _read(path: Path) -> str:
    """The document an editor holds: line endings as they are, the BOM taken as the encoding."""
    return path.read_bytes().decode("utf-8").removeprefix("\ufeff")


def _write(path: Path, text: str) -> None:
    bom = "\ufeff" if path.exists() and path.read_bytes().startswith(b"\xef\xbb\xbf") else ""
    path.write_bytes((bom + text).encode("utf-8"))
