"""Files as they are: CRLF, mixed endings, a BOM, tabs and latin-1 bytes survive edits, diffs and --apply."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from greenloop.agent import apply_changes
from greenloop.agent.changes.actions import apply_plan
from greenloop.agent.changes.edits import EditMiss, apply_search_replace
from greenloop.agent.changes.text import restore_endings
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import EditRejected
from greenloop.agent.plan import DebugPlan, EditAction, WriteAction
from greenloop.agent.ports import SandboxPort
from greenloop_sandbox import LocalSandbox, load_template

# mostly CRLF, two LF lines (as after a merge of a Windows and a Unix edit), no newline at the end
MIXED = b"def add(a, b):\r\n    return a - b\r\n\n\ndef mul(a, b):\r\n    return a * b"
CRLF = b"def add(a, b):\r\n    return a - b\r\n\r\n\r\ndef mul(a, b):\r\n    return a * b\r\n"
BOM = b"\xef\xbb\xbf# coding: utf-8\nNAME = 'caf\xc3\xa9'\n\ndef add(a, b):\n    return a - b\n"
TABS = b"def add(a, b):\n\tif a:\n\t\treturn a - b\n\treturn b\n"
LATIN1 = "# -*- coding: latin-1 -*-\nNAME = 'café'\n\ndef add(a, b):\n    return a - b\n".encode("latin-1")


def _edit(ws: Path, path: str, search: str, replace: str) -> WorkingCopy:
    """The loop's way: read the text, edit it, write it back through the working copy."""
    copy = WorkingCopy.from_workspace(ws)
    text = copy.read(path)
    assert text is not None
    copy.write(path, apply_search_replace(text, search, replace).text)
    return copy


def test_a_mixed_endings_file_is_edited_and_applied_with_its_endings_kept(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(MIXED)
    (tmp_path / "other.py").write_bytes(MIXED)  # nobody changes this one
    copy = _edit(tmp_path, "calc.py", "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")
    assert copy.read("calc.py") == MIXED.decode().replace("\r\n", "\n").replace("a - b", "a + b")
    changes = copy.changes()
    assert [c.path for c in changes.files] == ["calc.py"]
    # once refused as "changed since greenloop read it": the check read the disk with newline translation
    assert apply_changes(tmp_path, changes) == ["calc.py"]
    assert (tmp_path / "calc.py").read_bytes() == MIXED.replace(b"a - b", b"a + b")
    assert (tmp_path / "other.py").read_bytes() == MIXED


def test_a_replacement_in_lf_is_written_in_crlf_into_a_crlf_file(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(CRLF)
    copy = _edit(tmp_path, "calc.py", "    return a - b", "    if a is None:\n        return b\n    return a + b")
    apply_changes(tmp_path, copy.changes())
    data = (tmp_path / "calc.py").read_bytes()
    assert data == CRLF.replace(b"    return a - b", b"    if a is None:\r\n        return b\r\n    return a + b")
    assert data.count(b"\n") == data.count(b"\r\n")


def test_a_bom_stays_and_is_not_text_to_edit(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(BOM)
    copy = WorkingCopy.from_workspace(tmp_path)
    assert copy.read("calc.py") == BOM[3:].decode()  # the model never sees the BOM
    copy.write("calc.py", "# coding: utf-8\nNAME = 'café'\n\ndef add(a, b):\n    return a + b\n")  # a whole-file write
    apply_changes(tmp_path, copy.changes())
    assert (tmp_path / "calc.py").read_bytes() == BOM.replace(b"a - b", b"a + b")


def test_an_editor_buffer_of_a_bom_file_keeps_the_bom(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(BOM)
    unsaved = BOM[3:].decode().replace("a - b", "b + a")  # editors hold the text without its BOM
    copy = WorkingCopy.from_workspace(tmp_path, {"calc.py": unsaved})
    assert copy.files()["calc.py"] == BOM.replace(b"a - b", b"b + a")


def test_tabs_stay_tabs_when_the_model_answers_in_spaces(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(TABS)
    copy = _edit(tmp_path, "calc.py", "    if a:\n        return a - b",
                 "    if a:\n        print(a)\n        return a + b")
    apply_changes(tmp_path, copy.changes())
    assert (tmp_path / "calc.py").read_bytes() == TABS.replace(b"\t\treturn a - b", b"\t\tprint(a)\n\t\treturn a + b")


async def test_a_latin1_file_is_refused_clearly_and_left_byte_identical(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(LATIN1)
    (tmp_path / "test_calc.py").write_text("from calc import add\n")
    copy = WorkingCopy.from_workspace(tmp_path)
    assert copy.read("calc.py") is None
    plan = DebugPlan(diagnosis="add subtracts", actions=[
        EditAction(kind="edit", path="calc.py", search="    return a - b", replace="    return a + b"),
        WriteAction(kind="write", path="calc.py", content="def add(a, b):\n    return a + b\n"),
    ])
    out = await apply_plan(plan, copy, SandboxPort(LocalSandbox(load_template("python"))), iteration=1)
    reasons = [e.reason for e in out.events if isinstance(e, EditRejected)]
    assert len(reasons) == 2 and all("not UTF-8 (byte 0xe9 on line 2" in r for r in reasons)
    assert out.applied == 0 and copy.files()["calc.py"] == LATIN1 and copy.changes().files == []


def test_the_diff_of_a_crlf_file_applies_with_git(tmp_path: Path) -> None:
    ws, clone = tmp_path / "ws", tmp_path / "copy"
    ws.mkdir()
    (ws / "calc.py").write_bytes(MIXED)
    copy = _edit(ws, "calc.py", "    return a * b", "    return b * a")
    diff = copy.changes().diff
    assert "-    return a * b\n\\ No newline at end of file\n+    return b * a\n\\ No newline" in diff
    shutil.copytree(ws, clone)
    (tmp_path / "fix.diff").write_text(diff, newline="")
    subprocess.run(["git", "apply", "--whitespace=nowarn", str(tmp_path / "fix.diff")], cwd=clone, check=True)
    assert (clone / "calc.py").read_bytes() == MIXED.replace(b"a * b", b"b * a")


def test_apply_keeps_a_scripts_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_bytes(b"#!/usr/bin/env python3\r\nprint(1)\r\n")
    script.chmod(0o755)
    copy = _edit(tmp_path, "run.py", "print(1)", "print(2)")
    apply_changes(tmp_path, copy.changes())
    assert script.read_bytes() == b"#!/usr/bin/env python3\r\nprint(2)\r\n" and script.stat().st_mode & 0o111


@pytest.mark.parametrize(("before", "after", "expected"), [
    ("a\r\nb\nc\r\n", "a\nB\nc\n", "a\r\nB\r\nc\r\n"),  # dominant CRLF for the changed line
    ("a\nb\r\nc\n", "a\nb\nX\nc\n", "a\nb\r\nX\nc\n"),  # dominant LF; the kept CRLF line keeps its CRLF
    ("a\r\nb", "a\nb\nc", "a\r\nb\r\nc"),  # the old last line gains an ending when lines follow it
    ("a\r\nb\r\n", "a\nb", "a\r\nb"),  # ... and loses it when the new text ends there
    ("x\r\n", "", ""),
])
def test_restore_endings(before: str, after: str, expected: str) -> None:
    assert restore_endings(before, after) == expected


async def test_a_write_that_differs_only_in_line_endings_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_bytes(CRLF)
    copy = WorkingCopy.from_workspace(tmp_path)
    plan = DebugPlan(diagnosis="-", actions=[WriteAction(kind="write", path="calc.py", content=CRLF.decode())])
    out = await apply_plan(plan, copy, SandboxPort(LocalSandbox(load_template("python"))), iteration=1)
    assert out.applied == 0 and "changes nothing" in out.problems[0]
    assert copy.changes().files == []


def test_a_form_feed_is_no_line_break_for_an_edit(tmp_path: Path) -> None:
    source = b"import os\n\x0c\ndef add(a, b):\n\treturn a - b\n\x0c\ndef mul(a, b):\n\treturn a * b\n"
    (tmp_path / "calc.py").write_bytes(source)
    copy = _edit(tmp_path, "calc.py", "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")
    apply_changes(tmp_path, copy.changes())
    assert (tmp_path / "calc.py").read_bytes() == source.replace(b"a - b", b"a + b")


def test_a_missed_search_shows_the_files_own_line_numbers_past_a_form_feed() -> None:
    text = "import os\n\x0c\nLIMIT = 10\nRATE = 2\n"
    with pytest.raises(EditMiss) as miss:
        apply_search_replace(text, "RATE = 3  # per second", "RATE = 4")
    assert "    4| RATE = 2" in str(miss.value)  # line 4, as the editor and the traceback count it
