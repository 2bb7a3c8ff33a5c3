"""`stats` against a hand-built store whose numbers are worked out by hand below."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.run_records import RunStore
from greenloop.run_records.stats import percentile

# (id, model, config, outcome, iterations, prompt, completion, cost, seconds, call latencies, verdict)
RUNS = [
    ("a1", "big", "plain", "green", 1, 100, 20, 0.10, 10.0, [1.0, 2.0], (True, True, True)),
    ("a2", "big", "plain", "green", 3, 300, 60, 0.30, 30.0, [3.0], (True, True, False)),
    ("a3", "big", "plain", "stuck", 5, 500, 100, 0.50, 50.0, [4.0, 5.0, 6.0], None),
    ("a4", "big", "plain", None, 0, 0, 0, 0.0, None, [], None),  # crashed: never finished
    ("b1", "big", "no-diagnosis", "budget", 2, 40, 10, 0.05, 4.0, [0.5], (False, False, False)),
    ("c1", "small", "plain", "green", 2, 10, 10, 0.0, 8.0, [0.25, 0.75], None),
]


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    store = RunStore.open(tmp_path / "runs.sqlite3")
    for i, (rid, model, cfg, outcome, its, pt, ct, cost, secs, lats, verdict) in enumerate(RUNS):
        store.start_run(
            rid,
            mode="fix",
            workspace="/w",
            config={"runs": {"label": cfg}},
            seed=1,
            model=model,
            started_at=1_700_000_000.0 + i,
        )
        for lat in lats:
            store.add_call(rid, {"step": "plan", "model": model, "latency": lat, "outcome": "ok"})
        if outcome is not None:
            store.finish_run(
                rid,
                outcome=outcome,
                iterations=its,
                prompt_tokens=pt,
                completion_tokens=ct,
                cost=cost,
                seconds=secs or 0.0,
                summary="",
            )
        if verdict is not None:
            store.set_verdict(rid, ran=verdict[0], works=verdict[1], perfect=verdict[2])
    return store


def test_stats_by_model_and_config(store: RunStore) -> None:
    rows = {tuple(r.group.values()): r for r in store.stats()}
    assert list(rows) == [("big", "no-diagnosis"), ("big", "plain"), ("small", "plain")]
    plain = rows[("big", "plain")]
    assert (plain.runs, plain.finished, plain.green) == (4, 3, 2)
    assert plain.success_rate == pytest.approx(2 / 3)
    assert plain.iterations_mean == pytest.approx(3.0)  # (1 + 3 + 5) / 3 finished runs
    assert plain.tokens_mean == pytest.approx((120 + 360 + 600 + 0) / 4)
    assert plain.cost_total == pytest.approx(0.9)
    assert plain.cost_mean == pytest.approx(0.225)
    assert plain.seconds_p50 == pytest.approx(30.0)
    assert plain.seconds_p90 == pytest.approx(46.0)  # 30 + 0.8 * (50 - 30)
    assert plain.calls == 6
    assert plain.latency_p50 == pytest.approx(3.5)  # 1..6
    assert plain.latency_p90 == pytest.approx(5.5)
    assert plain.latency_p99 == pytest.approx(5.95)
    assert plain.verdicts == {"perfect": 1, "works": 1}
    nodiag = rows[("big", "no-diagnosis")]
    assert (nodiag.green, nodiag.success_rate, nodiag.verdicts) == (0, 0.0, {"failed": 1})
    small = rows[("small", "plain")]
    assert (small.success_rate, small.latency_p50, small.cost_total) == (1.0, 0.5, 0.0)


def test_stats_by_config_only(store: RunStore) -> None:
    rows = store.stats(by=["config"])
    assert [(r.group["config"], r.runs, r.green) for r in rows] == [("no-diagnosis", 1, 0), ("plain", 5, 3)]


def test_empty_store_has_no_rows(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "empty.sqlite3") as store:
        assert store.stats() == []


def test_percentile_edges() -> None:
    assert percentile([], 50) is None
    assert percentile([4.0], 99) == 4.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0], 100) == 2.0
