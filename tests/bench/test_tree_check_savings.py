"""benchmarks/tree_check_savings.py: recorded candidates replayed through the tree check, from their diffs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.bench.scripts import script

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.candidate_round import _diff

savings = script("tree_check_savings")
BASE = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n"


def diff(before: str, after: str) -> str:
    """The diff a round records for a candidate (candidate_round._diff)."""
    start = WorkingCopy(Path("/x"), {"shop.py": before.encode()})
    fork = start.fork()
    fork.write("shop.py", after)
    return _diff(start, fork)[0]


def candidate(index: int, before: str, after: str, green: bool = False, kind: str = "model",
           at: float = 0.0) -> list[dict[str, Any]]:
    return [{"kind": "candidate_asked", "route": "function", "index": index, "at": at},
            {"kind": "candidate_tested", "route": "function", "index": index, "status": "tested", "at": at + 0.5,
             "diff": diff(before, after), "change_kind": kind, "green": green, "passed": int(green),
             "failed": int(not green), "errors": 0, "run_id": "r1"}]


def test_a_reformatted_echo_and_a_reformatted_repeat_are_found_across_a_round_that_moved() -> None:
    moved = BASE.replace("result = 0", "result = 1")  # round 1's best: the state moves to it
    change = moved.replace("+= item", "+= item * 2")
    events = [
        *candidate(1, BASE, moved),
        {"kind": "round_ended", "moved": True, "best": 1},
        *candidate(1, moved, change),  # a change, not green
        *candidate(2, moved, change.replace("item * 2", "item*2  # twice")),  # the same change written otherwise
        *candidate(3, moved, moved.replace("result = 1", "result=1  # one")),  # the state given back
        *candidate(4, moved, moved.replace("result = 1\n", "result = 1\n    '''A docstring.'''\n")),  # a change
        *candidate(5, moved, moved.replace("return result", "return result - 1"), green=True),
        {"kind": "done", "changes": {"files": [{"path": "shop.py", "before": BASE}]}},
    ]
    counts = savings.Counts()
    savings.replay(events, None, counts)
    assert (counts.tested, counts.unknown, len(counts.unchanged), len(counts.repeats)) == (6, 0, 1, 1)
    assert counts.green_lost == [] and counts.outcome_differs == []
    assert [r.split(",")[0] for r in counts.rejected] == ["r1 #2 repeat", "r1 #3 unchanged"]
    assert counts.unchanged == [0.5] and "| 6 | 0 | 1 | 1 | 2 | 0.50 |" in savings.table({"b": counts})


def test_a_green_candidate_newly_rejected_is_said_and_a_diff_that_does_not_apply_is_not_guessed() -> None:
    events = [*candidate(1, BASE, BASE.replace("result = 0", "result=0  # zero"), green=True),
              *candidate(2, BASE.replace("total", "other"), BASE.replace("total", "other2")),
              {"kind": "done", "changes": {"files": [{"path": "shop.py", "before": BASE}]}}]
    counts = savings.Counts()
    savings.replay(events, None, counts)
    assert counts.green_lost == ["r1 #1 (unchanged)"] and counts.unknown == 1
    assert "GREEN CANDIDATE NEWLY REJECTED r1 #1" in savings.table({"b": counts})
