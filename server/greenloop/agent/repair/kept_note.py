"""What the kept changes did to the code a request shows: the original lines and the change, as a diff.

A change that makes more tests pass is kept as the state the next rounds start from, green or not
(a small edit of a constant that makes 6 of 8 tests pass). The next request then shows the code as
that change left it; without this note the model never sees the original, and a wrong partial
change (operands swapped, a bound moved) looks like the project's own code. So a request whose
shown files differ from the workspace says so: the diff from the original, and that the change may
be undone.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy

MAX_DIFF_LINES = 60  # a longer diff is cut: the note is about a partial change, not a rewrite


def kept_note(paths: Sequence[str], copy: WorkingCopy, tests: TestFiles) -> str:
    """The note for a request that shows code of `paths` ("" when they are as in the workspace)."""
    rows: list[str] = []
    for change in copy.changes().files:
        if change.path not in paths or tests.is_test(change.path) or change.before is None or change.after is None:
            continue
        rows += difflib.unified_diff(change.before.splitlines(), change.after.splitlines(),
                                     f"a/{change.path}", f"b/{change.path}", lineterm="", n=2)
    if not rows:
        return ""
    if len(rows) > MAX_DIFF_LINES:
        rows = [*rows[:MAX_DIFF_LINES], f"... ({len(rows) - MAX_DIFF_LINES} more diff lines)"]
    return ("\n## Kept so far\nAn earlier change made more tests pass and is kept, so the code above is the code after "
            "it. The original code and what that change did (a diff from the workspace's files):\n```diff\n"
            + "\n".join(rows) + "\n```\nIt may be only part of the fix, or wrong: keep it, change it or undo it.\n")
