"""What the run store hands back: run summaries, full run records and statistics rows."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

VERDICTS: dict[str, tuple[bool, bool, bool]] = {
    "perfect": (True, True, True),
    "works": (True, True, False),
    "runs": (True, False, False),
    "failed": (False, False, False),
}
"""A person's answer to "did it run / work / perfect?" -> (ran, works, perfect). "skip" stores nothing."""


def verdict_word(ran: bool | None, works: bool | None, perfect: bool | None) -> str | None:
    """(ran, works, perfect) -> the one word that describes it, or None when no answer was given."""
    if ran is None and works is None and perfect is None:
        return None
    if perfect:
        return "perfect"
    if works:
        return "works"
    if ran:
        return "runs"
    return "failed"


class RunSummary(BaseModel):
    """One line of `greenloop runs list`."""

    id: str
    mode: str
    model: str
    config_name: str
    started_at: float
    outcome: str | None  # None: the run never finished (crash, still running)
    iterations: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    seconds: float | None
    summary: str
    verdict: str | None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RunDetail(RunSummary):
    """Everything recorded about one run (`greenloop runs show`)."""

    workspace: str
    seed: int | None
    config: dict[str, Any] = Field(default_factory=dict)
    finished_at: float | None = None
    ran: bool | None = None
    works: bool | None = None
    perfect: bool | None = None
    note: str = ""
    events: list[dict[str, Any]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    execs: list[dict[str, Any]] = Field(default_factory=list)


class StatsRow(BaseModel):
    """Aggregates over the runs that share one group key (e.g. model and config)."""

    group: dict[str, str]
    runs: int
    finished: int
    green: int
    success_rate: float  # green / finished (0 when nothing finished)
    iterations_mean: float
    tokens_mean: float
    cost_total: float
    cost_mean: float
    seconds_p50: float | None
    seconds_p90: float | None
    calls: int
    latency_p50: float | None
    latency_p90: float | None
    latency_p99: float | None
    verdicts: dict[str, int] = Field(default_factory=dict)  # perfect/works/runs/failed -> count
