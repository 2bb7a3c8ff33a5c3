"""A run's ChangeSet -> a WorkspaceEdit the user reviews (change annotations that need confirmation)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from greenloop.agent.changes.text import split_lines
from greenloop.agent.events import ChangeSet, Done, FileChange
from greenloop.lsp.diagnostics import utf16_len

ANNOTATION_ID = "greenloop-fix"
ANNOTATION_LABEL = "greenloop fix"

# rel path -> the open document's version (None: not open or unknown).
VersionOf = Callable[[str], int | None]


@dataclass(frozen=True)
class EditSupport:
    """What the client's `workspace.workspaceEdit` capabilities allow."""

    document_changes: bool = True
    annotations: bool = True
    create: bool = True
    delete: bool = True

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities | None) -> EditSupport:
        edit = capabilities.workspace.workspace_edit if capabilities and capabilities.workspace else None
        if edit is None:
            return cls(False, False, False, False)
        ops = set(edit.resource_operations or [])
        return cls(
            document_changes=bool(edit.document_changes),
            annotations=edit.change_annotation_support is not None,
            create=types.ResourceOperationKind.Create in ops,
            delete=types.ResourceOperationKind.Delete in ops,
        )


def _end_of(lines: list[str]) -> types.Position:
    if not lines:
        return types.Position(0, 0)
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return types.Position(len(lines), 0)
    return types.Position(len(lines) - 1, utf16_len(last))


def _position(lines: list[str], index: int) -> types.Position:
    return types.Position(index, 0) if index < len(lines) else _end_of(lines)


def plain_edits(before: str, after: str) -> list[types.TextEdit]:
    """Line-level edits that turn `before` into `after` (ranges in `before`).

    Lines end where LSP says they do ("\n", "\r\n", "\r"; a form feed is no line break), and the
    edited lines carry the file's own endings. A BOM is the editor's encoding, not text in its
    document, so it is left out of both sides.
    """
    old = split_lines(before.removeprefix("\ufeff"))
    new = split_lines(after.removeprefix("\ufeff"))
    edits: list[types.TextEdit] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            rng = types.Range(_position(old, i1), _position(old, i2))
            edits.append(types.TextEdit(range=rng, new_text="".join(new[j1:j2])))
    return edits


def text_edits(
    before: str, after: str, annotation: str | None
) -> list[types.TextEdit | types.AnnotatedTextEdit]:
    """`plain_edits`, each carrying the change annotation when one is given."""
    edits = plain_edits(before, after)
    if annotation is None:
        return list(edits)
    return [
        types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=annotation) for e in edits
    ]


def preview_description(done: Done, diagnosis: str) -> str:
    """What the Refactor Preview says about a change: its label when it is only plausible (risk.py), then
    the model's diagnosis, else the run's summary."""
    text = diagnosis or done.summary
    return f"{done.changes.label}. {text}" if done.changes.label else text


def workspace_edit(
    root: Path,
    changes: ChangeSet,
    *,
    description: str,
    version_of: VersionOf = lambda _: None,
    support: EditSupport = EditSupport(),  # frozen, so sharing the default is safe
) -> types.WorkspaceEdit | None:
    """The edit for a change set; None when no file changes (environment-only changes are not edits)."""
    files = [change for change in changes.files if change.before != change.after]
    if not files:
        return None
    uri_of = {
        change.path: from_fs_path(str(root / change.path)) or (root / change.path).as_uri()
        for change in files
    }
    if not support.document_changes:
        return types.WorkspaceEdit(
            changes={uri_of[c.path]: plain_edits(c.before or "", c.after or "") for c in files}
        )
    annotation = ANNOTATION_ID if support.annotations else None
    document_changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = []
    for change in files:
        document_changes.extend(
            _document_changes(change, uri_of[change.path], annotation, version_of, support)
        )
    annotations = None
    if annotation is not None:
        annotations = {
            annotation: types.ChangeAnnotation(
                label=ANNOTATION_LABEL, needs_confirmation=True, description=description or None
            )
        }
    return types.WorkspaceEdit(document_changes=document_changes, change_annotations=annotations)


def _document_changes(
    change: FileChange, uri: str, annotation: str | None, version_of: VersionOf, support: EditSupport
) -> list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile]:
    if change.after is None:
        if not support.delete:
            return [_document_edit(uri, None, change.before or "", "", annotation)]
        return [types.DeleteFile(uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True),
                                 annotation_id=annotation)]  # fmt: skip
    if change.before is None:
        out: list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile] = []
        if support.create:
            options = types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            out.append(types.CreateFile(uri=uri, options=options, annotation_id=annotation))
        out.append(_document_edit(uri, None, "", change.after, annotation))
        return out
    return [_document_edit(uri, version_of(change.path), change.before, change.after, annotation)]


def _document_edit(
    uri: str, version: int | None, before: str, after: str, annotation: str | None
) -> types.TextDocumentEdit:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(text_edits(before, after, annotation)),
    )
