"""Export writes the successful fixes' prompt/completion pairs once each, and reads back equal."""

from __future__ import annotations

import json
from pathlib import Path

from greenloop.run_records import RunStore


def _call(step: str, prompt: str, reply: str, outcome: str = "ok") -> dict[str, object]:
    return {
        "step": step,
        "model": "m",
        "outcome": outcome,
        "latency": 0.1,
        "messages": [{"role": "system", "content": "fix"}, {"role": "user", "content": prompt}],
        "reply": reply,
    }


def _run(
    store: RunStore, rid: str, outcome: str, iterations: list[list[dict[str, object]]], mode: str = "fix"
) -> None:
    store.start_run(rid, mode=mode, workspace="/w", config={}, seed=1, model="m", started_at=1_700_000_000.0)
    for number, calls in enumerate(iterations, start=1):
        store.add_event(
            rid, {"kind": "iteration_started", "at": float(number), "iteration": number, "max_iterations": 5}
        )
        for call in calls:
            store.add_call(rid, call)
    store.finish_run(
        rid,
        outcome=outcome,
        iterations=len(iterations),
        prompt_tokens=0,
        completion_tokens=0,
        cost=0.0,
        seconds=1.0,
        summary="",
    )


def test_export_round_trip(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "runs.sqlite3")
    winning = [_call("diagnosis", "bug in add", "off by one"), _call("plan", "bug in add", '{"actions": []}')]
    _run(store, "g1", "green", [[_call("plan", "first try", "wrong")], winning])
    _run(store, "g2", "green", [winning])  # the same pairs again: exact duplicates
    _run(store, "g3", "green", [[_call("plan", "other", "x", outcome="failed"), _call("plan", "other", "y")]])
    _run(store, "s1", "stuck", [[_call("plan", "never fixed", "nope")]])
    _run(store, "gen", "green", [[_call("files", "write app", "code")]], mode="generate")

    out = tmp_path / "exports" / "pairs.jsonl"
    count = store.export_pairs(out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert count == len(rows) == 3
    assert [(r["meta"]["run_id"], r["meta"]["step"], r["completion"]) for r in rows] == [
        ("g1", "diagnosis", "off by one"),
        ("g1", "plan", '{"actions": []}'),
        ("g3", "plan", "y"),
    ]
    assert rows[0]["prompt"] == [
        {"role": "system", "content": "fix"},
        {"role": "user", "content": "bug in add"},
    ]
    assert list(tmp_path.joinpath("exports").iterdir()) == [out]  # no temp file left behind

    assert store.export_pairs(tmp_path / "gen.jsonl", modes=["generate"]) == 1
    store.close()
