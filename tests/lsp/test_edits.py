"""ChangeSet -> WorkspaceEdit: applying the edit reproduces the run's files; annotations need confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import ChangeSet, FileChange
from greenloop.lsp.edits import ANNOTATION_ID, EditSupport, plain_edits, workspace_edit
from tests.lsp.workspace_edits import apply_text_edits, apply_workspace_edit

CASES = [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb\nc", "a\nb\nc\nd"),  # no trailing newline, append
    ("a\nb\nc", "a\nb"),  # drop the last line (no trailing newline)
    ("", "x = 1\n"),
    ("x\n", ""),
    ("def f():\n    return 1\n", 'def f():\n    """Doc ✓ 😀."""\n    return 2\n'),
    ("é😀\nz", "é😀\ny"),  # astral characters count double in UTF-16
    ("a\r\nb\r\n", "a\r\nc\r\n"),
    ("a\r\nb\nc\r\n", "a\r\nB\r\nc\r\n"),  # mixed endings: the edited line as the run wrote it
    ("x = 1\f\ny = 2\nz = 3\n", "x = 1\f\ny = 2\nz = 4\n"),  # a form feed is no line break in LSP
    ("a\rb\nc\n", "a\rb\nC\n"),  # a lone CR is one (in LSP)
]


@pytest.mark.parametrize(("before", "after"), CASES)
def test_plain_edits_turn_before_into_after(before: str, after: str) -> None:
    assert apply_text_edits(before, list(plain_edits(before, after))) == after


def test_unchanged_lines_are_not_rewritten() -> None:
    before = "".join(f"line {i}\n" for i in range(100))
    after = before.replace("line 50\n", "line fifty\n")
    edits = plain_edits(before, after)
    assert len(edits) == 1
    assert edits[0].range.start.line == 50 and edits[0].range.end.line == 51


def test_workspace_edit_creates_edits_and_deletes_with_confirmation(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (tmp_path / "old.py").write_text("gone\n", encoding="utf-8")
    changes = ChangeSet(
        files=[
            FileChange(
                path="calc.py",
                before="def add(a, b):\n    return a - b\n",
                after="def add(a, b):\n    return a + b\n",
            ),
            FileChange(path="pkg/new.py", before=None, after="VALUE = 1\n"),
            FileChange(path="old.py", before="gone\n", after=None),
            FileChange(path="same.py", before="x\n", after="x\n"),
        ]
    )
    edit = workspace_edit(
        tmp_path,
        changes,
        description="add subtracted",
        version_of=lambda rel: 7 if rel == "calc.py" else None,
    )
    assert edit is not None and edit.document_changes is not None
    annotation = (edit.change_annotations or {})[ANNOTATION_ID]
    assert annotation.needs_confirmation is True
    assert annotation.label == "greenloop fix" and annotation.description == "add subtracted"
    kinds = [type(change).__name__ for change in edit.document_changes]
    assert kinds == ["TextDocumentEdit", "CreateFile", "TextDocumentEdit", "DeleteFile"]
    first = edit.document_changes[0]
    assert isinstance(first, types.TextDocumentEdit) and first.text_document.version == 7
    for change in edit.document_changes:
        if isinstance(change, types.TextDocumentEdit):
            assert all(
                isinstance(e, types.AnnotatedTextEdit) and e.annotation_id == ANNOTATION_ID
                for e in change.edits
            )
        else:
            assert change.annotation_id == ANNOTATION_ID
    apply_workspace_edit(edit)
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (tmp_path / "pkg/new.py").read_text() == "VALUE = 1\n"
    assert not (tmp_path / "old.py").exists()


def test_no_file_changes_is_no_edit(tmp_path: Path) -> None:
    assert workspace_edit(tmp_path, ChangeSet(packages=["requests"]), description="") is None


def test_clients_without_document_changes_get_plain_changes(tmp_path: Path) -> None:
    changes = ChangeSet(files=[FileChange(path="a.py", before="x\n", after="y\n")])
    edit = workspace_edit(tmp_path, changes, description="d", support=EditSupport(False, False, False, False))
    assert edit is not None and edit.document_changes is None and edit.change_annotations is None
    assert next(iter((edit.changes or {}).values()))[0].new_text == "y\n"


def test_edit_support_reads_vscode_capabilities() -> None:
    from pytest_lsp import client_capabilities

    support = EditSupport.of(client_capabilities("visual-studio-code"))
    assert support == EditSupport(document_changes=True, annotations=True, create=True, delete=True)
    assert EditSupport.of(types.ClientCapabilities()) == EditSupport(False, False, False, False)


def test_a_bom_is_the_editors_encoding_not_text(tmp_path: Path) -> None:
    before, after = "\ufeffa = 1\r\nb = 2\r\n", "\ufeffa = 9\r\nb = 3\r\n"
    edits = plain_edits(before, after)
    assert all("\ufeff" not in e.new_text for e in edits)
    assert apply_text_edits(before[1:], list(edits)) == after[1:]


def test_a_crlf_file_edited_through_the_editor_keeps_its_bytes(tmp_path: Path) -> None:
    original = b"\xef\xbb\xbfdef add(a, b):\r\n    return a - b\n\r\n\x0c\r\ndef mul(a, b):\r\n    return a * b\r\n"
    (tmp_path / "calc.py").write_bytes(original)
    copy = WorkingCopy.from_workspace(tmp_path)
    copy.write("calc.py", (copy.read("calc.py") or "").replace("a * b", "b * a"))
    edit = workspace_edit(tmp_path, copy.changes(), description="fix")
    assert edit is not None
    apply_workspace_edit(edit)
    assert (tmp_path / "calc.py").read_bytes() == original.replace(b"a * b", b"b * a")
