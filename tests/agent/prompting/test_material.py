"""The 'no retrieval' baseline shows the project files a failure names, in any template's language."""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.prompting.material import whole_files
from greenloop_sandbox import TestFailure


def test_whole_files_are_the_source_files_the_failures_name(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"pkg/mod.py": b"x = 1\n", "src/app.tsx": b"let a = 1;\n", "src/app.ts": b"b\n",
                                   "src/lib.rs": b"fn f() {}\n", "README.md": b"hi\n"})
    failure = TestFailure(test_id="t", traceback='File "pkg/mod.py", line 1\n  at src/app.tsx:1:5\n  at src/lib.rs:1')
    text = whole_files(copy, [failure])
    assert [line for line in text.splitlines() if line.startswith("### ")] == [
        "### pkg/mod.py", "### src/app.tsx", "### src/lib.rs"]  # `app.tsx` is not taken for `app.ts`
