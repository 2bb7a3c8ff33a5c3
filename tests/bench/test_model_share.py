"""benchmarks/model_share.py: a 1.5B reply in a cell the model lost, classed from the loop's own prompt, the reply
read with python's ast and the reply-reading of the function rung, and the reference fix of a real case folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.bench.scripts import script
from tests.bench.test_oracle import BUGGY, FIXED, PATH, case_folder, function, prompt, workspace

from greenloop.agent.repair.prompts import prompt_hash
from greenloop.bench.oracle_fix import ReferenceFix
from greenloop.run_records import RunStore

share = script("model_share")
FIX = ReferenceFix.of({PATH: BUGGY}, {PATH: FIXED})
TRUTH = [f"{PATH}::Circle.area", f"{PATH}::ratio"]
RIGHT = "The area needs pi and r squared.\n```python\ndef area(self):\n    return math.pi * self.r ** 2\n```\n"
WRONG = "```python\ndef area(self):\n    return math.pi * self.r\n```"
ECHO = "It is right:\n```python\ndef area(self):\n    # the area\n    return 3.14 * self.r\n```"  # a comment: the same tree


def fence(text: str) -> str:
    return f"```python\n{text}\n```"


def asked(tmp_path: Path, symbol: str) -> list[dict[str, Any]]:
    copy, index = workspace(tmp_path / symbol)
    return prompt(function(symbol), copy, index, tmp_path)


def classed(messages: list[dict[str, Any]], text: str, **fields: Any) -> str:
    return str(share.reply_class(share.Reply(messages, text, **fields), FIX, TRUTH, set())[0])


def test_each_reply_to_a_request_that_shows_the_truth_def_gets_its_class(tmp_path: Path) -> None:
    area = asked(tmp_path, "Circle.area")
    assert classed(area, RIGHT, status="tested") == "right def, lost by the loop"  # docstring left out: same tree
    assert classed(area, RIGHT[:60], finish_reason="length") == "cut off"
    assert classed(area, "The bug is that the area is not squared; square r.") == "no code"
    assert classed(area, ECHO, status="tested") == "echo"
    assert classed(area, WRONG, status="rejected", reason="the reply's `area` is the same as the one in the file: "
                   "it changes nothing") == "echo"  # the loop's own word for it
    assert classed(area, fence("def size(self):\n    return 1"), status="rejected",
                   reason="the reply defines size, not `area`") == "not applied"
    assert classed(area, fence("def area(self):\n    return math.pi * (self.r"), status="rejected") == "not applied"
    assert classed(area, WRONG, status="tested") == "wrong fix"
    assert classed(area, WRONG, status="tested", green=True) == "wrong fix"
    assert classed(area, "", failed="the request is too long") == "request failed (loop)"


def test_a_request_without_a_truth_def_is_the_loops_share_whatever_the_reply(tmp_path: Path) -> None:
    perimeter = asked(tmp_path, "perimeter")
    assert classed(perimeter, RIGHT, status="tested") == "truth def not shown (loop)"
    assert classed(perimeter, "no idea") == "truth def not shown (loop)"


def test_a_change_given_again_is_a_repeat_and_a_right_def_in_a_right_cell_is_not_lost(tmp_path: Path) -> None:
    area = asked(tmp_path, "Circle.area")
    replies = [share.Reply(area, WRONG, status="tested"), share.Reply(area, "again:\n" + WRONG, status="tested"),
               share.Reply(area, RIGHT, status="tested")]
    assert [c for _, c, _ in share.classify(replies, FIX, TRUTH)] == ["wrong fix", "repeat", "right def, lost by the loop"]
    assert share.classify(replies, FIX, TRUTH, lost=False)[2][1] == share.RIGHT_KEPT


def test_defs_are_read_at_any_indentation_by_their_tail_name() -> None:
    method = "    def area(self):\n        '''Doc.'''\n        return 3.14 * self.r\n"
    found = share.defs(method)
    assert list(found) == ["area"] and share.named(found, "Circle.area") == share.named(share.defs(BUGGY), "Circle.area")
    assert share.named(found, "Circle.scale") is None and share.defs("def broken(:\n") == {}


def test_a_runs_calls_are_matched_to_their_candidates_and_only_cells_the_oracle_made_right_are_read(
        tmp_path: Path) -> None:
    """A bench folder with a real run store: the reply asked again keeps no candidate, the last one gets it;
    a case the oracle did not make right, and a cell that is right, are not the model's share."""
    folder = case_folder(tmp_path)
    (folder / "cases.jsonl").write_text(json.dumps({"id": "shapes-1", "tests": ["tests/test_shapes.py::test_area"], "truth": [
        {"path": PATH, "symbol": "Circle.area"}, {"path": PATH, "symbol": "ratio"}]}) + "\n")
    out = tmp_path / "out" / ".bench"
    out.mkdir(parents=True)
    area = asked(tmp_path, "Circle.area")
    again = [*area, {"role": "assistant", "content": "prose"}, {"role": "user", "content": "Give the code."}]
    store = RunStore.open(out / "runs.sqlite3")
    for messages, reply, seed in ((area, "The area is wrong.", 7), (again, WRONG, 7), (area, ECHO, 8)):
        store.add_call("run-1", {"iteration": 1, "step": "repair_function", "messages": messages, "reply": reply,
                                 "seed": str(seed), "temperature": "0.8", "finish_reason": "stop", "outcome": "ok"})
    for seed, status in ((7, "tested"), (8, "tested")):
        store.add_event("run-1", {"kind": "candidate_tested", "iteration": 1, "seed": seed, "temperature": 0.8,
                                  "prompt_hash": prompt_hash(area), "status": status, "green": False})
    store.close()
    results = [{"key": "a", "config": "plain", "task": "shapes-1", "run_id": "run-1", "outcome": "budget"},
               {"key": "b", "config": "edits", "task": "shapes-1", "run_id": "run-2", "outcome": "green",
                "extra": {"kind": "model", "verdict": {"name": "same"}}}]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    found = share.cells("realbugs", {"shapes-1"}, out.parent, "here", folder / "cases.jsonl", rescued=False)
    assert [(c.config, c.outcome) for c in found] == [("plain", "budget")]
    assert [(r.status, k) for r, k, _ in found[0].replies] == [
        ("asked again", "no code"), ("tested", "wrong fix"), ("tested", "echo")]
    assert share.cells("realbugs", set(), out.parent, "here", folder / "cases.jsonl", rescued=True) == []
    text = share.table(found, "shapes")
    assert "| no code | 1 | 1 | shapes-1 |" in text and "2 of 3" not in text and "3 of 3" in text
