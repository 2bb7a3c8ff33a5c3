"""What every model call leaves behind: a `CallRecord`, summed per client into `Usage`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from greenloop.llm.prices import price_of
from greenloop.settings import ModelPrice

Outcome = Literal["ok", "repaired", "failed"]
Mode = Literal["json_schema", "json_object", "prompt", "text"]


class CallRecord(BaseModel):
    """One HTTP round trip to the model (transport retries folded in)."""

    step: str
    model: str
    base_url: str
    seed: int | None
    temperature: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = Field(
        default=False, description="True when the server sent no usage and greenloop counted the tokens."
    )
    latency: float = 0.0  # seconds from the first attempt to the last byte, retries included
    ttft: float | None = None  # seconds to the first streamed text (streams only)
    request_bytes: int = 0
    response_bytes: int = 0
    cost: float = 0.0  # USD, from llm.prices or the shipped price table (greenloop.llm.prices)
    outcome: Outcome = "ok"
    error: str | None = None
    started_at: float = 0.0  # unix time
    mode: Mode = "text"
    attempt: int = 0  # 0 = first answer, n = the n-th repair of a structured reply
    retries: int = 0  # transport retries (429, 5xx, timeouts, connection errors)
    finish_reason: str | None = None
    cached: bool = False  # served from a cassette
    recorded_seconds: float | None = None  # served: the seconds the model took when the reply was recorded
    messages: list[dict[str, str]] = Field(default_factory=list)
    reply: str = ""


@dataclass
class Usage:
    """Totals over every call of one client (= one run)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    served_seconds: float = 0.0  # model seconds a cassette saved: served replies' recorded seconds less serving's

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, record: CallRecord) -> None:
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        self.cost += record.cost
        self.calls += 1
        if record.cached and record.recorded_seconds is not None:
            self.served_seconds += max(0.0, record.recorded_seconds - record.latency)


def cost_of(prices: dict[str, ModelPrice], model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD for a call: `prices` (llm.prices), else the shipped price table; 0 for an unknown model."""
    price = price_of(prices, model)
    if price is None:
        return 0.0
    return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1_000_000


_SPENT: ContextVar[list[int] | None] = ContextVar("greenloop_tokens_spent", default=None)


@contextmanager
def tokens_spent() -> Iterator[list[int]]:
    """The tokens (prompt + completion) of each call recorded inside, in this task only: the calls of one
    request among others the same client has out at once (a round's candidates sent together)."""
    spent: list[int] = []
    token = _SPENT.set(spent)
    try:
        yield spent
    finally:
        _SPENT.reset(token)


def spend(record: CallRecord) -> None:
    """Count a recorded call's tokens where `tokens_spent` is counting."""
    spent = _SPENT.get()
    if spent is not None:
        spent.append(record.prompt_tokens + record.completion_tokens)
