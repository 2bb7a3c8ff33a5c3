"""benchmarks/ablation.py on real bench cells: five cells and their run records from the 1.5B model's
HumanEvalFix bench (fixtures/ablation/README.md), written into a run store the way the bench does."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from tests.bench.scripts import script

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair import ladder
from greenloop.agent.repair.small_edit_candidates import small_edits
from greenloop.agent.repair.splice import Target
from greenloop.bench.configs import apply_config, load_config
from greenloop.bench.state import BenchState, CellResult
from greenloop.bench.suites import load_suite
from greenloop.retrieval import Location
from greenloop.run_records import RunStore
from greenloop.settings import Settings
from greenloop_sandbox import TestFailure, TestReport

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "ablation"
STORED = ROOT / "docs" / "benchmarks" / "green-and-right" / "edits-realbugs20.json"


records, ablation, plan = script("ablation_records"), script("ablation"), script("ablation_plan")


def _recorded(out: Path) -> RunStore:
    """A bench --out folder holding the five real cells: results.jsonl and a run store with their events,
    its store left open as a running bench's is."""
    state = out / ".bench"
    state.mkdir(parents=True)
    (state / "results.jsonl").write_text((FIXTURES / "results.jsonl").read_text())
    rows = [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines()]
    store = RunStore.open(state / "runs.sqlite3")
    for row in rows:
        store.start_run(row["run_id"], mode="fix", workspace="ws", config={}, seed=row["seed"],
                        model=row["model"], started_at=0.0, config_label=row["config"])
    for line in (FIXTURES / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        store.add_event(event["run_id"], event)
    return store


@pytest.fixture
def bench_out(tmp_path: Path) -> Path:
    """The five real cells in a finished bench's folder (its run store closed)."""
    _recorded(tmp_path / "bench-out").close()
    return tmp_path / "bench-out"


def _cells(out: Path) -> dict[tuple[str, str], Any]:
    return {(c.config, c.task): c for c in records.read_folder(out, "humanevalfix")}


def test_each_round_is_told_by_its_rung_with_its_seconds(bench_out: Path) -> None:
    cells = _cells(bench_out)
    stuck = cells["first-green", "Python/37"]  # budget: small edits cut by their 150 s, then three model rounds
    assert [(r.rung, r.ended) for r in stuck.rounds] == [
        ("small edits", "nothing_better"), ("function", "nothing_better"), ("hotter", "nothing_better"),
        ("anew", "nothing_better")]
    edits = stuck.rounds[0]
    assert edits.cut and (edits.asked, edits.offered, edits.tested) == (47, 60, 47)
    assert 150 <= edits.seconds < 160  # `loop.small_edits_seconds` = 150 bounds the round
    assert sum(e.seconds for e in edits.edits) <= edits.seconds
    assert stuck.kept_rung == "" and stuck.kept_family == ""
    assert sum(r.seconds for r in stuck.rounds) <= stuck.seconds

    hotter = cells["first-green", "Python/10"]  # a model reply of the hotter rung turned it green, round 3
    assert [r.rung for r in hotter.rounds] == ["small edits", "function", "small edits", "next function", "hotter"]
    assert (hotter.kept_rung, hotter.kept_family, hotter.verdict) == ("hotter", "", "equivalent")


def test_a_running_benchs_store_is_read_with_its_newest_events(tmp_path: Path) -> None:
    store = _recorded(tmp_path / "running")  # open: the events are in its write-ahead log, not yet in the file
    try:
        assert (tmp_path / "running" / ".bench" / "runs.sqlite3-wal").stat().st_size > 0
        cells = _cells(tmp_path / "running")
        assert [r.rung for r in cells["first-green", "Python/37"].rounds] == [
            "small edits", "function", "hotter", "anew"]
        assert all(c.rounds for c in cells.values())
    finally:
        store.close()


def test_a_second_look_that_was_not_kept_is_its_own_round(bench_out: Path) -> None:
    looked = _cells(bench_out)["second-look", "Python/137"]
    assert [(r.rung, r.tested, r.green, r.ended) for r in looked.rounds] == [
        ("small edits", 23, 1, "green"), ("second look", 4, 0, "")]
    assert (looked.kept_rung, looked.kept_family) == ("small edits", "arguments swapped")
    assert looked.rounds[0].moved_family == "arguments swapped"


def test_the_table_counts_kept_greens_by_verdict_per_config(bench_out: Path) -> None:
    found = {t.config: t for t in ablation.tables(records.read_folder(bench_out, "humanevalfix"))}
    first = found["first-green"]
    assert (first.cells, first.green, first.recorded) == (4, 3, 4)
    rungs = {r.name: r for r in first.rungs}
    assert (rungs["small edits"].ran, rungs["small edits"].kept, rungs["small edits"].correct,
            rungs["small edits"].differs) == (4, 2, 1, 1)  # /3 same, /55 differs (as first judged)
    assert (rungs["hotter"].ran, rungs["hotter"].kept, rungs["hotter"].correct, rungs["hotter"].moved) == (2, 1, 1, 1)
    assert rungs["function"].kept == 0 and rungs["function"].ran == 2 and rungs["function"].seconds > 0
    families = {r.name: r for r in first.families}
    assert (families["comparison"].kept, families["comparison"].correct, families["comparison"].differs) == (2, 1, 1)
    assert families["comparison"].green == 2 and families["comparison"].tested > families["comparison"].green
    assert families["regex"].ran == 0  # no HumanEvalFix function holds a pattern
    second = {r.name: r for r in found["second-look"].rungs}
    assert (second["second look"].ran, second["second look"].kept, second["second look"].tested) == (1, 0, 4)
    text = ablation.markdown(list(found.values()), [str(bench_out)])
    assert "| hotter | 2 | 1 | 1 | 0 | 0 | 1 |" in text and "## humanevalfix · second-look" in text


def test_the_plan_reruns_the_cells_a_part_could_change_with_a_config_that_turns_it_off(
        bench_out: Path, tmp_path: Path) -> None:
    cells = records.read_folder(bench_out, "humanevalfix")
    found = {r.name: r for r in plan.reruns(cells)}
    assert set(found) == {"no-small-edits", "no-hotter", "no-edits-comparison", "no-edits-arguments-swapped"}
    assert found["no-hotter"].cells == {"humanevalfix": {"Python/10": {"kept", "moved"}, "Python/37": {"ran"}}}
    # comparison: kept in /3 and /55; in /37 its edits were in the round its time limit cut
    assert found["no-edits-comparison"].cells["humanevalfix"] == {
        "Python/3": {"kept", "moved"}, "Python/55": {"kept", "moved"}, "Python/37": {"cut"}}
    base = ROOT / "benchmarks" / "configs" / "second-look.toml"
    text = plan.write_plan(cells, tmp_path / "configs", base)
    assert "no-hotter: loop.rungs_off = ['hotter'], 2 cell(s)" in text
    for name, setting, off in (("no-hotter", "rungs_off", ["hotter"]),
                               ("no-edits-comparison", "edits_off", ["comparison"])):
        config = load_config(tmp_path / "configs" / f"{name}.toml")  # the bench's own reader and checks
        loop = apply_config(Settings(), config).loop
        assert getattr(loop, setting) == off and loop.second_look and loop.candidates == 4


def test_rerun_suite_files_are_cut_from_the_suite_the_cells_came_from(bench_out: Path, tmp_path: Path) -> None:
    suite = ROOT / "benchmarks" / "data" / "humanevalfix" / "humanevalfix-python.jsonl"
    cells = records.read_folder(bench_out, "humanevalfix")
    text = plan.write_plan(cells, tmp_path / "configs", ROOT / "benchmarks" / "configs" / "second-look.toml",
                           [f"humanevalfix={suite}"], tmp_path / "tasks")
    cut = tmp_path / "tasks" / "humanevalfix" / "no-hotter.jsonl"
    assert sorted(json.loads(line)["task_id"] for line in cut.read_text().splitlines()) == ["Python/10", "Python/37"]
    assert "(2 of 2 tasks found)" in text
    # a realbugs suite file: its rows name their cases' folder beside it, so the cut file gets a link to it
    realbugs_cut = tmp_path / "realbugs" / "one.jsonl"
    assert plan.cut_suite([ROOT / "benchmarks" / "data" / "realbugs" / "cases.jsonl"], "realbugs",
                          {"youtube-dl-3", "tqdm-6"}, realbugs_cut) == 2
    assert sorted(t.id for t in load_suite("realbugs", realbugs_cut).tasks) == ["tqdm-6", "youtube-dl-3"]


def test_every_small_edit_kind_belongs_to_the_family_edits_off_names() -> None:
    source = ("def total(items, n):\n    if items is None:\n        return 0\n    s = 0\n"
              "    for i in range(n - 1):\n        s += items[i].size\n    return s\n")
    target = Target("calc.py", "total", "function", 1, 7)
    kinds = {kind for _, kind in small_edits(source, target, 1000, hot=[6])}
    assert {"loop bound changed (arithmetic)", "none guard returning another type",
            "none check skipping a statement"} <= kinds
    for kind in kinds:
        family = records.family_of(kind)
        assert family in records.FAMILIES, kind
        left = {k for _, k in small_edits(source, target, 1000, hot=[6], off=[family])}
        assert not {k for k in left if records.family_of(k) == family}, (kind, family)
    assert records.family_of("model") == "" and records.family_of("install") == ""
    assert records.family_of("loop bound changed") == "term dropped"  # how records named it before its family


def test_each_rungs_why_names_that_rung(tmp_path: Path) -> None:
    root = tmp_path / "calc"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    (root / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    copy = WorkingCopy.from_workspace(root)
    top = Location("calc.py", "add", "function", 1, 2, 1.0, "frames")
    nxt = Location("calc.py", "mul", "function", 5, 6, 0.5, "frames")
    test = Target("test_calc.py", "test_add", "function", 4, 5)

    def failing(message: str) -> TestReport:
        return TestReport(failed=1, failures=[TestFailure(test_id="test_calc.py::test_add", file="test_calc.py",
                                                          message=message, traceback=message)])

    states = [  # (report, tests, failing tests)
        (failing("assert -1 == 5"), TestFiles(), ()),
        (failing('File "calc.py", line 2\nSyntaxError: invalid syntax'), TestFiles(), ()),
        (failing("ModuleNotFoundError: No module named 'numpy'"), TestFiles(), ()),
        (failing("assert -1 == 5"), TestFiles(writable=True), (test,)),
    ]
    alone = WorkingCopy(root, {"calc.py": b"def add(a, b):\n    return a - b\n"})  # the file is the function
    named: set[str] = set()
    for rung in ladder.ORDER:
        others = [r.name for r in ladder.ORDER if r is not rung]
        for (report, tests, failing_tests), code in itertools.product(states, (copy, alone)):
            for approach in ladder.ladder([top, nxt], report, code, tests, failing_tests=failing_tests, off=others):
                assert records.rung_of(approach.why, approach.route) == rung.name, approach.why
                named.add(rung.name)
    assert named >= {"function", "hotter", "anew", "blocks", "broken file", "install", "checks"}


def test_evidence_counts_each_familys_greens_from_stored_reports_once(bench_out: Path) -> None:
    cells = ablation.read_sources([str(STORED), f"humanevalfix={bench_out}", f"humanevalfix={bench_out}"])
    assert sum(c.suite == "humanevalfix" for c in cells) == 5  # the folder given twice: its runs count once
    text, data = ablation.evidence(cells)
    fams = data["families"]
    assert fams["regex"]["realbugs"]["kept"] == 2 and fams["regex"]["realbugs"]["correct"] == 2
    assert fams["exception suppressed"]["realbugs"]["kept"] == 1 and fams["exception suppressed"]["realbugs"]["unknown"] == 1
    assert fams["comparison"]["humanevalfix"]["kept"] == 2 and fams["comparison"]["humanevalfix"]["ran"] >= 3
    assert "exception suppressed" in data["green_never_correct"]
    assert "attribute default" in data["never_green"] and "regex" not in data["never_green"]
    assert fams["regex"]["realbugs"]["tasks"] == ["youtube-dl-3", "youtube-dl-43"]
    assert "| regex | 0 (0) | 0/0/0 | 0 | 2 (2) | 2/0/0 | - |" in text  # no realbugs run record: tried in unknown


def test_the_cli_refuses_to_write_into_a_source_and_leaves_the_sources_as_they_were(
        bench_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def digest() -> str:
        return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(bench_out.rglob("*")) if p.is_file())).hexdigest()

    before = digest()
    assert ablation.main([f"humanevalfix={bench_out}", "--out", str(bench_out / "ablation")]) == 2
    assert "read only" in capsys.readouterr().err and not (bench_out / "ablation").exists()
    assert ablation.main([f"humanevalfix={bench_out}", "--out", str(tmp_path / "table")]) == 0
    assert json.loads((tmp_path / "table" / "ablation.json").read_text())[0]["config"] == "first-green"
    assert ablation.main([str(tmp_path / "nowhere")]) == 2 and "no .bench folder" in capsys.readouterr().err
    assert digest() == before


def test_offers_name_the_family_whose_edit_is_the_reference_fix() -> None:
    offered = script("ablation_offered")
    found = {o.task: o for o in offered.offers({("humanevalfix", "Python/3"), ("realbugs", "tqdm-6"),
                                                ("realbugs", "PySnooper-3"), ("realbugs", "youtube-dl-14"),
                                                ("realbugs", "no-such-case")})}
    assert found["Python/3"].exact == "comparison" and found["Python/3"].edits["comparison"] >= 2
    assert found["tqdm-6"].exact == "attribute default"  # the developers' fix of a real bug, with no model
    # its fix renamed an unbound name: the family that did so is deleted (ablation), so no edit is the fix
    assert (found["PySnooper-3"].exact, found["PySnooper-3"].note) == ("", "")  # its def found, no edit the fix
    assert found["youtube-dl-14"].note == "the fix spans several defs" and not found["youtube-dl-14"].edits
    assert found["no-such-case"].note == "not in the suite file"
    assert all(f in records.FAMILIES for o in found.values() for f in o.edits)


def test_a_rerun_without_a_part_gives_its_gains_against_the_baseline(
        bench_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rerun = tmp_path / "no-edits-arguments-swapped"
    state = BenchState(rerun / ".bench")  # written as the bench writes a finished cell
    state.add(CellResult(key="no-edits-arguments-swapped@1|m|Python/137|0", config="no-edits-arguments-swapped",
                         task="Python/137", repeat=0, seed=1234, model="m", outcome="budget", iterations=3,
                         seconds=900.0))
    state.add(CellResult(key="no-edits-arguments-swapped@1|m|Python/999|0", config="no-edits-arguments-swapped",
                         task="Python/999", repeat=0, seed=1234, model="m", outcome="green", seconds=5.0,
                         extra={"kind": "model", "verdict": {"name": "same"}}))
    assert ablation.main([f"humanevalfix={bench_out}", "--rerun", f"humanevalfix={rerun}",
                          "--out", str(tmp_path / "gains")]) == 0
    [gain] = json.loads((tmp_path / "gains" / "gains.json").read_text())
    # with the family, /137 was green and right (second-look, 251 s); without it, 3 rounds and no green
    assert (gain["config"], gain["cells"], gain["greens"], gain["right"], gain["wrong"]) == \
        ("no-edits-arguments-swapped", 1, 1, 1, 0)
    assert round(gain["seconds"]) == 251 - 900 and gain["changed"] == ["Python/137: right -> budget"]
    assert gain["missing"] == ["humanevalfix Python/999"]  # no baseline cell: not counted
    assert "| no-edits-arguments-swapped | 1 | 1 | 1 | 0 | -649 |" in capsys.readouterr().out
