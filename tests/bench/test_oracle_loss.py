"""The oracle's loss table (benchmarks/oracle_loss.py): cells read from a real run store and sorted into the
loss classes by what their requests showed (the loop's own prompts) and how their runs ended."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.bench.scripts import script
from tests.bench.test_oracle import BUGGY, FIXED, PATH, case_folder, function, prompt, workspace

from greenloop.agent.repair.approach import Approach
from greenloop.run_records import RunStore

loss_table = script("oracle_loss")
HALF = BUGGY.replace("return 3.14 * self.r\n", "return math.pi * self.r ** 2\n")
TRUTH = [{"path": "geometry/shapes.py", "symbol": "Circle.area"}, {"path": "geometry/shapes.py", "symbol": "ratio"}]


def bench_folder(tmp_path: Path, cells: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[Approach]]]) -> Path:
    """A bench folder and a realbugs set with one case per cell: (result fields, events, approaches asked)."""
    folder = case_folder(tmp_path)
    copy, index = workspace(tmp_path / "prompts")
    rows = []
    out = tmp_path / "out"
    (out / ".bench").mkdir(parents=True)
    store = RunStore.open(out / ".bench" / "runs.sqlite3")
    results = []
    for case, (fields, events, asked) in cells.items():
        if case != "shapes-1":
            shutil.copytree(folder / "cases" / "shapes-1", folder / "cases" / case)
        rows.append({"id": case, "tests": ["tests/test_shapes.py::test_area"], "truth": TRUTH})
        run_id = f"run-{case}"
        for event in events:
            store.add_event(run_id, {"run_id": run_id, **event})
        for approach in asked:
            store.add_call(run_id, {"step": "repair_function", "messages": prompt(approach, copy, index, tmp_path)})
        results.append({"key": case, "task": case, "run_id": run_id, **fields})
    store.close()
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / ".bench" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return out


def rejected(reason: str) -> dict[str, Any]:
    return {"kind": "candidate_tested", "status": "rejected", "route": "function", "reason": reason,
            "target": "`Circle.area` in geometry/shapes.py"}


def test_each_lost_cell_gets_its_class(tmp_path: Path) -> None:
    stuck = [{"kind": "done", "outcome": "stuck", "evidence": "the ladder is spent"}]
    out = bench_folder(tmp_path, {
        "shapes-1": ({"outcome": "green", "extra": {"kind": "model", "verdict": {"name": "same"}}}, [], []),
        "edit-1": ({"outcome": "green", "extra": {"kind": "comparison", "verdict": {"name": "differs"}}}, [], []),
        "never-1": ({"outcome": "stuck"}, stuck, [function("perimeter"), function("Circle.scale")]),
        "part-1": ({"outcome": "stuck"}, stuck, [function("perimeter"), function("Circle.area")]),
        "greenpart-1": ({"outcome": "green", "extra": {"kind": "model", "verdict": {"name": "differs"}}}, [],
                        [function("Circle.area")]),  # green on its tests with one def of two: the other never asked
        "greenall-1": ({"outcome": "green", "extra": {"kind": "model", "verdict": {"name": "differs"}}}, [],
                       [function("Circle.area"), function("ratio")]),
        "ids-1": ({"outcome": "stuck"}, [{"kind": "tests_ran", "failures": [{"message": (
            "ERROR: file or directory not found: test_shapes.py::test_area")}]}, *stuck], []),
        "dup-1": ({"outcome": "stuck"}, [rejected("the same change as candidate 1"), *stuck],
                  [function("Circle.area"), function("ratio")]),
        "rej-1": ({"outcome": "stuck"}, [rejected("the search text matches 2 places"), *stuck],
                  [function("Circle.area"), function("ratio")]),
        "echo-1": ({"outcome": "stuck"}, [rejected("the reply's `area` is the same as the one in the file: it "
                                                   "changes nothing"), *stuck],  # an echo is no failure to apply
                   [function("Circle.area"), function("ratio")]),
        "judged-1": ({"outcome": "green", "extra": {"kind": "model", "verdict": {"name": "unknown"}}},
                     [{"kind": "done", "outcome": "green", "changes": {"files": [{"path": PATH, "after": FIXED}]}}], []),
        "judged-2": ({"outcome": "green", "extra": {"kind": "model", "verdict": {"name": "unknown"}}},
                     [{"kind": "done", "outcome": "green", "changes": {"files": [{"path": PATH, "after": HALF}]}}],
                     [function("Circle.area"), function("ratio")]),
        "env-1": ({"outcome": "skipped", "error": "requirements not installed offline"}, [], []),
        "envstep-1": ({"outcome": "environment"}, [{"kind": "done", "outcome": "environment",
                        "summary": "The tests cannot run in the sandbox: ..."}], []),  # the step's stop, no round
        "budget-1": ({"outcome": "budget"}, [{"kind": "done", "outcome": "budget", "evidence": "max_iterations"}],
                     [function("perimeter")]),
    })
    found = {loss.task: loss.loss for loss in loss_table.losses("realbugs", out, out.parent / "set" / "cases.jsonl")}
    assert found == {
        "shapes-1": "",
        "edit-1": "small edit green first, not the fix",
        "never-1": "buggy def never shown",
        "part-1": "shown only part of a multi-def fix",
        "greenpart-1": "shown only part of a multi-def fix",
        "greenall-1": "green, not the fix (model reply)",
        "ids-1": "tests rerun under the wrong id",
        "dup-1": "fix needs lines outside defs",  # `from math import inf`; a repeated reply is no failure to apply
        "rej-1": "reply could not be applied",
        "echo-1": "fix needs lines outside defs",  # as dup-1: the next rule that fits
        "judged-1": "",  # the verdict did not finish, the truth defs are the reference's
        "judged-2": "green, not the fix (model reply)",
        "env-1": "tests could not run (environment)",
        "envstep-1": "tests could not run (environment)",
        "budget-1": "rounds ran out before the right def was asked",
    }
    text = loss_table.table(loss_table.losses("realbugs", out, out.parent / "set" / "cases.jsonl"), "t")
    assert "15 cells: 6 green, **2 green and right**, 13 lost; median 0 s per cell that ran." in text
    assert "did not finish: judged-1." in text
    assert "| shown only part of a multi-def fix | 2 | greenpart-1, part-1 |" in text
