"""Aggregates over recorded runs: success rate, iterations, tokens, cost and latency percentiles."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from greenloop.run_records.models import StatsRow, verdict_word

GROUP_COLUMNS: dict[str, str] = {
    "model": "model",
    "config": "config_name",
    "mode": "mode",
    "seed": "seed",
    "workspace": "workspace",
}
"""The keys `stats(by=...)` accepts -> the runs column each one groups on."""

SUCCESS_OUTCOMES = frozenset({"green"})


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def group_key(run: Mapping[str, Any], by: Sequence[str]) -> tuple[str, ...]:
    return tuple("" if run[GROUP_COLUMNS[key]] is None else str(run[GROUP_COLUMNS[key]]) for key in by)


def build_rows(
    runs: Iterable[Mapping[str, Any]], latencies: Mapping[str, list[float]], by: Sequence[str]
) -> list[StatsRow]:
    """One StatsRow per group of `runs` (dict-like rows of the runs table), sorted by group."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault(group_key(run, by), []).append(run)
    return [
        _row(dict(zip(by, key, strict=True)), members, latencies) for key, members in sorted(groups.items())
    ]


def _row(
    group: dict[str, str], runs: list[Mapping[str, Any]], latencies: Mapping[str, list[float]]
) -> StatsRow:
    finished = [r for r in runs if r["outcome"] is not None]
    green = [r for r in finished if r["outcome"] in SUCCESS_OUTCOMES]
    seconds = [float(r["seconds"]) for r in finished if r["seconds"] is not None]
    call_latencies = [lat for r in runs for lat in latencies.get(r["id"], [])]
    costs = [float(r["cost"]) for r in runs]
    verdicts: dict[str, int] = {}
    for r in runs:
        word = verdict_word(*(None if r[k] is None else bool(r[k]) for k in ("ran", "works", "perfect")))
        if word:
            verdicts[word] = verdicts.get(word, 0) + 1
    return StatsRow(
        group=group,
        runs=len(runs),
        finished=len(finished),
        green=len(green),
        success_rate=len(green) / len(finished) if finished else 0.0,
        iterations_mean=_mean([float(r["iterations"]) for r in finished]),
        tokens_mean=_mean([float(r["prompt_tokens"] + r["completion_tokens"]) for r in runs]),
        cost_total=sum(costs),
        cost_mean=_mean(costs),
        seconds_p50=percentile(seconds, 50),
        seconds_p90=percentile(seconds, 90),
        calls=len(call_latencies),
        latency_p50=percentile(call_latencies, 50),
        latency_p90=percentile(call_latencies, 90),
        latency_p99=percentile(call_latencies, 99),
        verdicts=verdicts,
    )
