"""What the model is shown of a failure: the project files it names (the 'no retrieval' baseline, any language),
and its text the same from run to run (no object addresses)."""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.prompting.material import render_failures, whole_files
from greenloop.agent.repair.prompts import render_failures as repair_failures
from greenloop_sandbox import TestFailure, TestReport


def test_whole_files_are_the_source_files_the_failures_name(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"pkg/mod.py": b"x = 1\n", "src/app.tsx": b"let a = 1;\n", "src/app.ts": b"b\n",
                                   "src/lib.rs": b"fn f() {}\n", "README.md": b"hi\n"})
    failure = TestFailure(test_id="t", traceback='File "pkg/mod.py", line 1\n  at src/app.tsx:1:5\n  at src/lib.rs:1')
    text = whole_files(copy, [failure])
    assert [line for line in text.splitlines() if line.startswith("### ")] == [
        "### pkg/mod.py", "### src/app.tsx", "### src/lib.rs"]  # `app.tsx` is not taken for `app.ts`


def _failure(address: str, mock_id: str) -> TestFailure:  # what pytest prints, with this run's addresses
    return TestFailure(
        test_id="tests/test_bar.py::test_len",
        message="TypeError: object of type 'NoneType' has no len()",
        traceback=f"self = <tqdm._tqdm.tqdm object at {address}>\n\n    def __len__(self):\n"
                  f">       return len(self.iterable)\nE       TypeError: object of type 'NoneType' has no len()\n"
                  f"E       where <bound method Bar.total of <bar.Bar object at {address}>> is called with "
                  f"<MagicMock name='mock.size' id='{mock_id}'> and <function half at {address}>(4)",
    )


def test_failures_shown_to_the_model_are_the_same_words_whatever_the_objects_addresses() -> None:
    first = render_failures(TestReport(failed=1, failures=[_failure("0x7fb9672eb810", "140234001")]))
    second = render_failures(TestReport(failed=1, failures=[_failure("0x7f143eb05610", "139876552")]))
    repaired = repair_failures(TestReport(failed=1, failures=[_failure("0x7f143eb05610", "139876552")]))
    assert first == second and " at 0x" not in first and "id='" not in first
    assert "self = <tqdm._tqdm.tqdm object>" in first and "<bound method Bar.total of <bar.Bar object>>" in first
    assert "<MagicMock name='mock.size'> and half(4)" in first  # a function is its name, as pytest's own repr
    assert " at 0x" not in repaired and "self = <tqdm._tqdm.tqdm object>" in repaired  # the repair prompt's too
