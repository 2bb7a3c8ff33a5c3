"""A remote cell's result and run records are kept exactly once, wherever the driver dies."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from greenloop.bench import handoff
from greenloop.bench.state import BenchState, CellResult
from greenloop.run_records import RunStore
from greenloop.run_records.bundle import merge_bundle, read_bundle


def _remote_store(path: Path, run_id: str, *, finished: bool = True) -> None:
    with RunStore.open(path) as store:
        store.start_run(run_id, mode="fix", workspace="/ws", config={}, seed=1, model="scripted", started_at=1.0)
        store.add_event(run_id, {"kind": "message", "text": "hello", "iteration": 1})
        store.add_call(run_id, {"step": "repair_function", "model": "scripted", "prompt_tokens": 3})
        if finished:
            store.finish_run(run_id, outcome="green", iterations=1, prompt_tokens=3, completion_tokens=1,
                             cost=0.0, seconds=1.0, summary="ok")


def test_a_bundle_holds_finished_runs_whole_and_merges_once(tmp_path: Path) -> None:
    remote = tmp_path / "remote.sqlite3"
    _remote_store(remote, "run-a")
    _remote_store(remote, "run-half", finished=False)  # a run cut off mid-way is not handed over
    bundle = read_bundle(remote)
    assert [r["id"] for r in bundle["runs"]] == ["run-a"]

    target = tmp_path / "bench.sqlite3"
    assert merge_bundle(target, bundle) == 1
    assert merge_bundle(target, bundle) == 0  # the same bundle again adds nothing
    with RunStore.open(target) as store:
        detail = store.get_run("run-a")
        assert [r.id for r in store.list_runs()] == ["run-a"]
    assert detail.outcome == "green" and len(detail.calls) == 1 and len(detail.events) == 1


def test_a_driver_killed_after_receiving_a_cell_keeps_it_on_the_next_start(tmp_path: Path) -> None:
    remote = tmp_path / "remote.sqlite3"
    _remote_store(remote, "run-b")
    result = CellResult(key="plain@x|scripted|T/1|0", config="plain", task="T/1", repeat=0, seed=1,
                        model="scripted", outcome="green", run_id="run-b", node="abc")
    state_dir, store = tmp_path / ".bench", tmp_path / ".bench" / "runs.sqlite3"
    state = BenchState(state_dir)
    # the driver wrote the pending file and died before the merge and the state line
    folder = state_dir / handoff.PENDING
    folder.mkdir(parents=True)
    (folder / "cell.json").write_text(json.dumps({"result": asdict(result), "bundle": read_bundle(remote)}))
    (folder / "cut.part").write_text('{"result": {"key"')  # a write cut off: never renamed into place

    again = BenchState(state_dir)
    assert handoff.recover(again, store) == 1
    assert again.done(result.key) and not any(folder.iterdir())
    assert handoff.recover(BenchState(state_dir), store) == 0
    lines = (state_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["node"] == "abc"
    with RunStore.open(store) as runs:
        assert [r.id for r in runs.list_runs()] == ["run-b"]

    handoff.keep(again, store, result, read_bundle(remote))  # a duplicate delivery: kept once
    with RunStore.open(store) as runs:
        assert len(runs.list_runs()) == 1
    assert len((state_dir / "results.jsonl").read_text().splitlines()) == 1
    assert not state.results  # the first BenchState saw nothing: it was read before
