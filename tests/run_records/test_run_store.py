"""The run store keeps what the agent writes, as it writes it, and reads it back whole."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from greenloop.run_records import RunStore, RunStoreError, record_verdict, store_path
from greenloop.settings import Settings


def _start(store: RunStore, run_id: str, **kw: object) -> None:
    args: dict[str, object] = {
        "mode": "fix",
        "workspace": "/ws",
        "config": {"llm": {"model": "m1", "api_key": "sk-secret"}, "runs": {"label": "plain"}},
        "seed": 7,
        "model": "m1",
        "started_at": time.time(),
    }
    args.update(kw)
    store.start_run(run_id, **args)  # type: ignore[arg-type]


def test_written_rows_are_visible_to_another_connection_before_the_run_ends(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    store = RunStore.open(path)
    _start(store, "run-1")
    store.add_event("run-1", {"kind": "iteration_started", "at": 0.5, "iteration": 1, "max_iterations": 3})
    store.add_exec("run-1", command="pytest -q", exit_code=1, duration=0.25, timed_out=False)
    # A "crash" now: nothing is closed or finished; another reader must see everything so far.
    other = sqlite3.connect(path)
    assert other.execute("SELECT count(*) FROM events WHERE run_id = 'run-1'").fetchone() == (1,)
    assert other.execute("SELECT command, iteration FROM execs").fetchall() == [("pytest -q", 1)]
    assert other.execute("SELECT outcome FROM runs").fetchall() == [(None,)]
    other.close()
    store.close()


def test_full_run_round_trip(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store:
        _start(store, "abc123")
        store.add_event(
            "abc123", {"kind": "iteration_started", "at": 0.1, "iteration": 1, "max_iterations": 5}
        )
        store.add_event("abc123", {"kind": "diagnosis_delta", "at": 0.2, "iteration": 1, "text": "par"})
        store.add_event("abc123", {"kind": "diagnosis", "at": 0.3, "iteration": 1, "text": "partial"})
        store.add_call(
            "abc123",
            {
                "step": "plan",
                "model": "m1",
                "prompt_tokens": 11,
                "completion_tokens": 4,
                "latency": 0.4,
                "outcome": "ok",
                "messages": [],
                "reply": "{}",
            },
        )
        store.add_event(
            "abc123", {"kind": "iteration_started", "at": 1.0, "iteration": 2, "max_iterations": 5}
        )
        store.add_call("abc123", {"step": "plan", "model": "m1", "latency": 0.2, "outcome": "failed"})
        store.finish_run(
            "abc123",
            outcome="green",
            iterations=2,
            prompt_tokens=11,
            completion_tokens=4,
            cost=0.01,
            seconds=3.5,
            summary="fixed it",
        )
        detail = store.get_run("abc1")  # a unique prefix is enough
    assert detail.id == "abc123"
    assert detail.outcome == "green" and detail.iterations == 2 and detail.seconds == 3.5
    assert detail.config_name == "plain" and detail.seed == 7 and detail.model == "m1"
    assert detail.config["llm"]["api_key"] == "***"  # secrets never reach the file
    assert [e["kind"] for e in detail.events] == ["iteration_started", "diagnosis", "iteration_started"]
    assert [c["iteration"] for c in detail.calls] == [1, 2]  # calls belong to the iteration they ran in
    assert detail.finished_at is not None and detail.verdict is None
    assert b"sk-secret" not in (tmp_path / "r.sqlite3").read_bytes()


def test_list_is_newest_first_and_limited(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store:
        for i in range(5):
            _start(store, f"run-{i}", started_at=1_700_000_000.0 + i)
        ids = [r.id for r in store.list_runs(limit=3)]
    assert ids == ["run-4", "run-3", "run-2"]


def test_started_at_is_kept_as_given(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store:
        _start(store, "r", started_at=1_700_000_000.5)
        assert store.get_run("r").started_at == 1_700_000_000.5


def test_events_before_start_are_kept(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store:
        store.add_event("early", {"kind": "message", "at": 0.0, "text": "hi"})
        _start(store, "early")
        assert [e["text"] for e in store.get_run("early").events] == ["hi"]


def test_unknown_and_ambiguous_ids(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store:
        _start(store, "aa1")
        _start(store, "aa2")
        with pytest.raises(RunStoreError, match="no run 'zz'"):
            store.get_run("zz")
        with pytest.raises(RunStoreError, match="ambiguous"):
            store.get_run("aa")
        with pytest.raises(RunStoreError, match="no run"):
            store.set_verdict("zz", ran=True, works=True, perfect=True)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("perfect", (True, True, True)),
        ("works", (True, True, False)),
        ("runs", (True, False, False)),
        ("failed", (False, False, False)),
    ],
)
def test_record_verdict(tmp_path: Path, word: str, expected: tuple[bool, bool, bool]) -> None:
    settings = Settings()
    with RunStore.open(store_path(settings, tmp_path)) as store:
        _start(store, "v1")
    record_verdict(settings, tmp_path, "v1", word)
    with RunStore.open(tmp_path / ".greenloop" / "runs.sqlite3") as store:
        detail = store.get_run("v1")
    assert (detail.ran, detail.works, detail.perfect) == expected
    assert detail.verdict == word


def test_skip_and_bad_verdicts(tmp_path: Path) -> None:
    settings = Settings()
    with RunStore.open(store_path(settings, tmp_path)) as store:
        _start(store, "v1")
    record_verdict(settings, tmp_path, "v1", "skip")
    with pytest.raises(Exception, match="unknown verdict"):
        record_verdict(settings, tmp_path, "v1", "great")
    with RunStore.open(store_path(settings, tmp_path)) as store:
        assert store.get_run("v1").verdict is None


def test_store_path_choices(tmp_path: Path) -> None:
    assert store_path(Settings(), tmp_path) == tmp_path / ".greenloop" / "runs.sqlite3"
    assert store_path(Settings(runs={"store": "x/db.sqlite3"}), tmp_path) == tmp_path / "x" / "db.sqlite3"
    assert store_path(Settings(runs={"store": str(tmp_path / "abs.db")}), None) == tmp_path / "abs.db"
    assert store_path(Settings(), None).name == "runs.sqlite3"
