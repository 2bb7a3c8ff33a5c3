"""A round trip's bookkeeping: the `Call` while it runs, its retries, and what it leaves (`CallRecord`, cassette)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openai import APITimeoutError

from greenloop import tokens
from greenloop.llm.cassette import Cassette, Exchange
from greenloop.llm.errors import LLMError
from greenloop.llm.prices import price_of
from greenloop.llm.records import CallRecord, Mode, Outcome, Usage, cost_of, spend
from greenloop.llm.request_builder import Messages
from greenloop.llm.retry import FormatRejected, as_llm_error, delay_for, is_format_rejection, retryable
from greenloop.settings import LLMSettings

StopRule = Callable[[str], bool]  # the reply so far (at a line's end) -> whether it is known enough to stop


@dataclass
class Call:
    """Bookkeeping of one round trip while it runs."""

    step: str
    mode: Mode
    body: dict[str, Any]
    started: float
    started_at: float
    attempt: int = 0
    retries: int = 0
    timeouts: int = 0  # retries after a timeout (at most one)
    ttft: float | None = None
    cached: bool = False
    recorded_seconds: float | None = None  # a served reply: the seconds the model took when it was recorded
    stop: StopRule | None = None  # the caller's rule to close a streamed reply early (not sent, not recorded)

    @classmethod
    def start(cls, step: str, mode: Mode, body: dict[str, Any]) -> Call:
        """A call starting now."""
        return cls(step=step, mode=mode, body=body, started=time.perf_counter(), started_at=time.time())


class CallKeeper:
    """Keeps one client's calls: retries them, serves and saves them on its cassette, and records them
    (each `CallRecord` summed into `usage` and sent to `sink`)."""

    def __init__(
        self, settings: LLMSettings, *, base_url: str, usage: Usage,
        sink: Callable[[CallRecord], None] | None = None, cassette: Cassette | None = None,
    ) -> None:
        self.settings = settings
        self.base_url = base_url
        self.usage = usage
        self.sink = sink
        self.cassette = cassette

    # -- retries -----------------------------------------------------------------------
    async def retry_or_raise(self, call: Call, exc: Exception) -> None:
        """Sleep before the next try, or raise FormatRejected / LLMError.

        A request that timed out is tried once more at most: a server that took `llm.timeout` once
        is likely hung, and `max_retries` more waits would keep the run stuck for that many timeouts.
        """
        if isinstance(exc, LLMError):  # already worded (the first-token timeout): not retried
            raise exc
        if call.mode in ("json_schema", "json_object") and is_format_rejection(exc):
            raise FormatRejected(str(exc)[:500]) from exc
        timed_out = isinstance(exc, APITimeoutError)
        if not retryable(exc) or call.retries >= self.settings.max_retries or (timed_out and call.timeouts):
            raise as_llm_error(
                exc, base_url=self.base_url, model=self.settings.model, retries=call.retries,
                timeout=self.settings.timeout,
            ) from exc
        await asyncio.sleep(delay_for(exc, call.retries, self.settings))
        call.retries += 1
        call.timeouts += timed_out

    # -- the cassette ------------------------------------------------------------------
    def serves(self, call: Call) -> bool:
        """Whether the cassette answers this call (replay, or memo with it recorded)."""
        return self.cassette is not None and self.cassette.serves(call.body)

    async def replayed(self, call: Call) -> Exchange:
        """The cassette's reply to a call it serves; its recorded error (or none recorded) raised."""
        assert self.cassette is not None
        call.cached = True
        exchange = self.cassette.lookup(call.body)
        if exchange is None:
            error = LLMError(
                f"Cassette {self.cassette.path} has no reply for this {call.step!r} request; "
                "the prompt or settings changed since it was recorded. Re-record it."
            )
            await self.record(call, None, "failed", error=str(error))
            raise error
        seconds = exchange.extra.get("seconds")
        call.recorded_seconds = float(seconds) if isinstance(seconds, int | float) else None
        if exchange.extra.get("format_rejected"):
            raise FormatRejected(exchange.error)
        if exchange.status != 200:
            await self.record(call, None, "failed", error=exchange.error)
            raise LLMError(exchange.error, status=exchange.status or None)
        return exchange

    def save(self, call: Call, exchange: Exchange) -> None:
        """Save the exchange on the cassette with the seconds it took, so a bench served it later can charge them."""
        if self.cassette is not None and not self.cassette.replaying:
            exchange.extra["seconds"] = round(time.perf_counter() - call.started, 3)
            self.cassette.save(call.body, exchange)

    # -- records -----------------------------------------------------------------------
    async def record(
        self, call: Call, exchange: Exchange | None, outcome: Outcome, error: str | None = None
    ) -> None:
        messages: Messages = call.body["messages"]
        prompt_tokens = completion_tokens = 0
        estimated = False
        if exchange is not None and exchange.usage:
            prompt_tokens = exchange.usage["prompt_tokens"]
            completion_tokens = exchange.usage["completion_tokens"]
        elif exchange is not None:
            prompt_tokens, completion_tokens = await asyncio.to_thread(_count, messages, exchange.content)
            estimated = True
        model = self.settings.model
        if price_of(self.settings.prices, model) is None and exchange is not None and exchange.model:
            model = exchange.model
        record = CallRecord(
            step=call.step, model=model, base_url=self.base_url, seed=call.body.get("seed"),
            temperature=call.body["temperature"], prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, tokens_estimated=estimated,
            latency=time.perf_counter() - call.started, ttft=call.ttft,
            request_bytes=len(json.dumps(call.body).encode()),
            response_bytes=exchange.response_bytes if exchange else 0,
            cost=cost_of(self.settings.prices, model, prompt_tokens, completion_tokens),
            outcome=outcome, error=error, started_at=call.started_at, mode=call.mode, attempt=call.attempt,
            retries=call.retries, finish_reason=exchange.finish_reason if exchange else None,
            cached=call.cached, recorded_seconds=call.recorded_seconds, messages=messages, reply=exchange.content if exchange else "",
        )
        self.usage.add(record)
        spend(record)
        if self.sink is not None:
            self.sink(record)


def _count(messages: Messages, reply: str) -> tuple[int, int]:
    return tokens.count_messages(messages), tokens.count_text(reply) if reply else 0
