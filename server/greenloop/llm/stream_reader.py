"""Streamed replies: the first chunk within a time limit, deltas read into an `Exchange`, a loop or a reply the caller's rule knows enough of stopped early.

Stopping closes the stream: the server sees the connection close and frees the request's slot (llama.cpp
cancels the task). The caller's rule (`Call.stop`) is asked each time the reply completes a line, with the
reply so far; once it holds, what came until then is the reply, finish reason "stopped".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator

from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionChunk

from greenloop import tokens
from greenloop.llm.call_keeper import Call, StopRule
from greenloop.llm.cassette import Exchange
from greenloop.llm.errors import LLMError
from greenloop.llm.repeats import LoopWatch
from greenloop.llm.request_builder import STEP_HEADER
from greenloop.settings import LLMSettings


class StreamReader:
    """Sends one client's streamed requests and reads their replies, text delta by text delta."""

    def __init__(self, openai: AsyncOpenAI, settings: LLMSettings, *, base_url: str) -> None:
        self.openai = openai
        self.settings = settings
        self.base_url = base_url
        self.in_flight = 0  # streamed requests of this client being read

    async def read(self, call: Call, exchange: Exchange) -> AsyncIterator[str]:
        """The reply's text deltas; its finish reason, usage, model and size go into `exchange`."""
        self.in_flight += 1
        try:
            async with contextlib.aclosing(self._reply(call, exchange)) as reply:
                async for text in reply:
                    yield text
        finally:
            self.in_flight -= 1

    async def _open(
        self, call: Call
    ) -> tuple[AsyncStream[ChatCompletionChunk], AsyncIterator[ChatCompletionChunk], ChatCompletionChunk | None]:
        """The stream and its first chunk, within `llm.first_token_timeout`, or the prompt's tokens at
        `llm.slowest_prompt_rate` when that is longer (an LLMError after it).

        A request sent while others of this client stream waits behind them on a one-slot server
        (the embedded model; generation writes files in parallel): it gets the limit once per request.
        """
        reading = tokens.count_messages(call.body.get("messages", [])) / self.settings.slowest_prompt_rate
        limit = round(max(self.settings.first_token_timeout, reading), 1) * self.in_flight
        stream: AsyncStream[ChatCompletionChunk] | None = None
        try:
            async with asyncio.timeout(limit):
                stream = await self.openai.chat.completions.create(
                    **call.body, extra_headers={STEP_HEADER: call.step}
                )
                chunks = aiter(stream)
                first = await anext(chunks, None)
        except TimeoutError:
            if stream is not None:
                await stream.close()
            raise LLMError(
                f"{self.base_url} sent nothing for {limit:g}s (llm.first_token_timeout) on the "
                f"{call.step!r} request: the model server is hung, or reads prompts slower than that. "
                "Check the server; for a slow one, raise llm.first_token_timeout."
            ) from None
        return stream, chunks, first

    async def _reply(self, call: Call, exchange: Exchange) -> AsyncGenerator[str, None]:
        stream, chunks, chunk = await self._open(call)
        watch = LoopWatch() if self.settings.stop_repeats else None
        so_far: list[str] = []
        try:
            while chunk is not None:
                exchange.response_bytes += len(chunk.model_dump_json()) + 8
                exchange.model = chunk.model or exchange.model
                if chunk.usage:
                    exchange.usage = {"prompt_tokens": chunk.usage.prompt_tokens,
                                      "completion_tokens": chunk.usage.completion_tokens}
                for choice in chunk.choices:
                    exchange.finish_reason = choice.finish_reason or exchange.finish_reason
                    text = choice.delta.content if choice.delta else None
                    if text:
                        if call.ttft is None:
                            call.ttft = time.perf_counter() - call.started
                        yield text
                        if watch is not None and watch.looping(text):
                            exchange.finish_reason = "repetition"  # closing the stream stops the server
                            return
                        if call.stop is not None and _stops(call.stop, so_far, text):
                            exchange.finish_reason = "stopped"
                            return
                chunk = await anext(chunks, None)
        finally:
            await stream.close()
        if exchange.finish_reason is None:
            raise ValueError(
                "the stream ended before the reply was complete: the server stopped mid-reply. "
                "llama-cpp-python's server does this on a prompt longer than its context window "
                "(set llm.context_window to the model's --n_ctx), on an error (see its log), and when "
                "another request arrives unless started with --interrupt_requests false"
            )


def _stops(rule: StopRule, so_far: list[str], text: str) -> bool:
    """Add `text` to the reply so far; ask `rule` when it completed a line."""
    so_far.append(text)
    return "\n" in text and rule("".join(so_far))
