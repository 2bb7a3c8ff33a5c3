"""The model client: chat completions over the official `openai` package, with retries and records.

One `LLMClient` per run. Every round trip leaves a `CallRecord` (sent to the
sink and summed into `usage`). Transport failures are retried here (the SDK's
own retries are off) so that a server rejecting `response_format` is not
retried, and so that cancelling the calling task aborts the request at once.

With `llm.stop_repeats` (the default) every request is streamed, so that a reply
that has fallen into a verbatim loop is stopped (finish_reason "repetition")
instead of running to max_tokens, and so that a cancelled request stops the
server's generation too (llama.cpp finishes a non-streamed reply regardless).
A streamed reply that sends nothing for `llm.first_token_timeout` seconds ends the call
(not retried); a request that times out is retried once at most.

Requests of one client go out together (a round's candidates), at most `llm.concurrency` at once and no
more than the embedded server's slots (`RequestGate`, `request_gate.py`); a server answering 429 to requests
sent together gets one at a time from then on, and the client keeps a note of it for the run (`take_notes`).
A caller may give `stop`, a rule on the streamed text so far: a reply it holds is closed at once (finish
reason "stopped"; closing the stream frees the server's slot), e.g. a reply known to echo the code shown.

It is made of three collaborators, each given what it needs when the client is built, none reading
another's state: a `RequestBuilder` (`request_builder.py`: what is sent), a `StreamReader` (`stream_reader.py`:
streamed replies) and a `CallKeeper` (`call_keeper.py`: retries, the cassette, records). The client
sequences them: build the body, serve it or send it (retrying), record what came back.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from pydantic import BaseModel

from greenloop.llm.call_keeper import Call, CallKeeper, StopRule
from greenloop.llm.cassette import Cassette, Exchange
from greenloop.llm.errors import LLMError, StructuredOutputError
from greenloop.llm.json_reply import ReplyError, parse_reply, repair_instruction, retry_instruction
from greenloop.llm.records import CallRecord, Mode, Usage
from greenloop.llm.repeats import trim_loop
from greenloop.llm.request_builder import STEP_HEADER, STREAMED, Messages, RequestBuilder, with_note
from greenloop.llm.request_gate import RequestGate
from greenloop.llm.retry import FormatRejected, delay_for
from greenloop.llm.server_tokens import ServerTokenizer
from greenloop.llm.stream_reader import StreamReader
from greenloop.settings import LLMSettings

T = TypeVar("T", bound=BaseModel)
_NEXT_MODE: dict[Mode, Mode] = {"json_schema": "json_object", "json_object": "prompt"}
_LARGE_REPLY = 64_000  # characters; bigger replies are parsed in a worker thread


def _http_client(base_url: str, timeout: float) -> DefaultAsyncHttpxClient | None:
    """No kept-alive connections to a server on this machine: llama.cpp's llama-server closes the
    connection after a streamed reply without saying so, and the next request on the pooled one failed
    with "Server disconnected without sending a response" (1 call in 4, each a counted retry). A new
    connection to 127.0.0.1 costs well under a millisecond."""
    host = urlsplit(base_url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    # the openai package's own HTTP library (httpx, or its fork httpx2 in openai 3.x)
    http = importlib.import_module(DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0])
    return DefaultAsyncHttpxClient(timeout=timeout, limits=http.Limits(max_keepalive_connections=0))


class LLMClient:
    """An OpenAI-compatible chat client; see the module docstring."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        base_url: str,
        api_key: str | None,
        sink: Callable[[CallRecord], None] | None = None,
        cassette: Cassette | None = None,
        context_window: int | None = None,
        slots: int | None = None,
        slots_note: str = "",
    ) -> None:
        """`slots`: requests the server decodes at once when known (the embedded one); `slots_note`: why
        that is fewer than it was asked for, said in the run."""
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        self.tokenizer = ServerTokenizer(self.base_url)
        self.usage = Usage()
        self._mode: Mode = "json_schema"  # the response_format mode that works here, learned by `structured`
        self._openai = AsyncOpenAI(
            api_key=api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=settings.timeout,
            http_client=_http_client(self.base_url, settings.timeout),
        )
        self._requests = RequestBuilder(settings, context_window=context_window or settings.context_window,
                                        count=self.tokenizer.count)
        self._streams = StreamReader(self._openai, settings, base_url=self.base_url)
        self._calls = CallKeeper(settings, base_url=self.base_url, usage=self.usage, sink=sink, cassette=cassette)
        wanted = settings.concurrency or slots  # None: no limit (callers' requests go as they come)
        self._gate = RequestGate(min(wanted, slots) if wanted and slots else wanted)
        if slots_note:
            self._gate.note(slots_note)

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens (None: not checked); longer requests are not sent."""
        return self._requests.context_window

    @property
    def sink(self) -> Callable[[CallRecord], None] | None:
        """Where each call's `CallRecord` goes as it ends."""
        return self._calls.sink

    @property
    def cassette(self) -> Cassette | None:
        """The recording this client serves replies from or saves them to."""
        return self._calls.cassette

    @property
    def concurrency(self) -> int:
        """Requests a round sends at once now: `llm.concurrency` (unset: the embedded server's slots, else 1),
        at most the server's slots, 1 after a 429."""
        return self._gate.limit or 1

    def take_notes(self) -> list[str]:
        """Lines for the run not shown yet: fewer requests at once than asked, and why."""
        return self._gate.take_notes()

    @property
    def structured_mode(self) -> Mode:
        """The response_format mode `structured` will try first on this endpoint."""
        return self._mode

    async def aclose(self) -> None:
        await self._openai.close()

    # -- public calls ------------------------------------------------------------
    async def complete(
        self,
        messages: Messages,
        *,
        step: str,
        max_tokens: int | None = None,
        attempt: int = 0,
        seed: int | None = None,
        temperature: float | None = None,
        stop: StopRule | None = None,
    ) -> str:
        """The reply text of one chat completion; `attempt` > 0 for a request asked again (next seed).

        `seed` and `temperature` override the settings' for this call (the fix loop's candidates:
        one greedy, the rest hotter, each with its own seed); the values sent are the ones recorded.
        `stop` is asked at each line the streamed reply completes; once it holds, the reply so far is
        the reply (finish reason "stopped"). Replies that are not streamed (`llm.stop_repeats` off) run to their end.
        """
        body = await self._requests.text(messages, max_tokens=max_tokens, attempt=attempt, step=step)
        if seed is not None:
            body["seed"] = seed
        if temperature is not None:
            body["temperature"] = temperature
        call = Call.start(step, "text", body)
        call.attempt, call.stop = attempt, stop
        exchange = await self._exchange(call)
        await self._calls.record(call, exchange, "ok")
        return trim_loop(exchange.content) if exchange.finish_reason == "repetition" else exchange.content

    async def fits(self, messages: Messages, *, step: str, max_tokens: int | None = None) -> bool:
        """Whether `messages` fit the context window whole, with room for the reply (nothing is sent)."""
        return await self._requests.fits(messages, step=step, max_tokens=max_tokens)

    async def stream(self, messages: Messages, *, step: str, max_tokens: int | None = None) -> AsyncIterator[str]:
        """Text deltas as they arrive; the call is recorded when the stream ends."""
        body = {**(await self._requests.text(messages, max_tokens=max_tokens, attempt=0, step=step)), **STREAMED}
        call = Call.start(step, "text", body)
        if self._calls.serves(call):
            exchange = await self._exchange(call)
            if exchange.content:
                yield exchange.content
            await self._calls.record(call, exchange, "ok")
            return
        parts: list[str] = []
        try:
            while True:
                entered = 0
                try:
                    exchange = Exchange()
                    async with self._gate.through() as entered:
                        async for text in self._streams.read(call, exchange):
                            parts.append(text)
                            yield text
                    break
                except Exception as exc:
                    if parts:
                        raise LLMError(
                            f"{self.base_url} cut the reply off after {len(''.join(parts))} characters "
                            f"({exc.__cause__ or exc}). Try again; if it repeats, check the model server."
                        ) from exc
                    await self._after_failure(call, exc, together=entered > 1 or self._gate.inside > 0)
        except BaseException as exc:  # tokens of a broken stream are unknown: recorded as 0
            partial = Exchange(content="".join(parts), usage={"prompt_tokens": 0, "completion_tokens": 0})
            await self._calls.record(call, partial, "failed", error=_describe(exc))
            raise
        exchange.content = "".join(parts)
        self._calls.save(call, exchange)
        await self._calls.record(call, exchange, "ok")

    async def structured(self, messages: Messages, schema: type[T], *, step: str, attempt: int = 0) -> T:
        """A validated `schema` instance, through response_format fallbacks and repair.

        Each repair request is sampled with the next seed (`attempt` > 0: the caller asks again).
        """
        json_schema = _json_schema(schema)
        mode = self.structured_mode
        convo = list(messages)
        raw_replies: list[str] = []
        first = attempt
        while True:
            body = await self._requests.structured(convo, json_schema, mode=mode, step=step, attempt=attempt)
            call = Call.start(step, mode, body)
            call.attempt = attempt
            try:
                exchange = await self._exchange(call)
            except FormatRejected as rejected:
                await self._calls.record(call, None, "failed", error=f"{mode} rejected: {rejected.detail}"[:500])
                mode = _NEXT_MODE[mode]
                self._mode = mode
                continue
            raw_replies.append(exchange.content)
            try:
                value = await self._parse(exchange.content, schema)
            except ReplyError as error:
                problem = str(error)
                if exchange.finish_reason in ("repetition", "length"):
                    why = "repeated itself" if exchange.finish_reason == "repetition" else "reached the token limit"
                    problem = f"It {why} and was cut off: {problem} Say each thing once, briefly."
                await self._calls.record(call, exchange, "failed", error=problem)
                if attempt - first >= self.settings.repair_attempts:
                    raise StructuredOutputError(
                        f"The model's reply for step {step!r} did not match {schema.__name__} after "
                        f"{attempt - first} repair request(s): {problem} Try a larger model or raise "
                        "llm.repair_attempts.",
                        raw_replies,
                    ) from None
                if exchange.finish_reason == "repetition":
                    # asked afresh, without the loop (docs/decisions/2026-11-llm-stop-repeats.md)
                    convo = with_note(messages, retry_instruction(problem))
                else:
                    convo = [*convo, {"role": "assistant", "content": exchange.content},
                             {"role": "user", "content": repair_instruction(problem)}]
                attempt += 1
                continue
            await self._calls.record(call, exchange, "ok" if attempt == first else "repaired")
            return value

    async def _parse(self, text: str, schema: type[T]) -> T:
        if len(text) > _LARGE_REPLY:
            return await asyncio.to_thread(parse_reply, text, schema)
        return parse_reply(text, schema)

    # -- one round trip -------------------------------------------------------------
    async def _exchange(self, call: Call) -> Exchange:
        """The reply (cassette or live, with retries); failures are recorded and raised."""
        if self._calls.serves(call):
            return await self._calls.replayed(call)
        try:
            while True:
                entered = 0
                try:
                    async with self._gate.through() as entered:
                        exchange = await self._attempt(call)
                    break
                except Exception as exc:
                    await self._after_failure(call, exc, together=entered > 1 or self._gate.inside > 0)
        except FormatRejected as rejected:
            self._calls.save(call, Exchange(status=400, error=rejected.detail, extra={"format_rejected": True}))
            raise
        except LLMError as exc:
            self._calls.save(call, Exchange(status=exc.status or 0, error=str(exc)))
            await self._calls.record(call, None, "failed", error=str(exc))
            raise
        except BaseException as exc:  # cancelled: record what we know, then let it go
            await self._calls.record(call, None, "failed", error=_describe(exc))
            raise
        self._calls.save(call, exchange)
        return exchange

    async def _after_failure(self, call: Call, exc: Exception, *, together: bool) -> None:
        """A 429 to requests sent together: one at a time from now on, said in the run, and this one tried
        again without counting it as a retry. Anything else: `CallKeeper.retry_or_raise`."""
        if together and isinstance(exc, openai.RateLimitError):
            self._gate.one_at_a_time(
                f"{self.base_url} answered HTTP 429 (too many requests) to requests sent at once: "
                "from now on they are sent one at a time (llm.concurrency)"
            )
            await asyncio.sleep(delay_for(exc, 0, self.settings))
            return
        await self._calls.retry_or_raise(call, exc)

    async def _attempt(self, call: Call) -> Exchange:
        if call.body.get("stream"):  # the whole reply, streamed so that a loop can be stopped
            exchange = Exchange()
            parts = [text async for text in self._streams.read(call, exchange)]
            exchange.content = "".join(parts)
            return exchange
        raw = await self._openai.chat.completions.with_raw_response.create(
            **call.body, extra_headers={STEP_HEADER: call.step}
        )
        completion = raw.parse()
        if not completion.choices:
            raise ValueError("the reply has no choices")
        choice = completion.choices[0]
        usage = completion.usage
        return Exchange(
            content=choice.message.content or "",
            usage={"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
            if usage else None,
            finish_reason=choice.finish_reason,
            model=completion.model or "",
            response_bytes=len(raw.http_response.content),
        )


@functools.lru_cache(maxsize=256)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema (generating it costs about a millisecond; models do not change)."""
    return schema.model_json_schema()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    return f"{type(exc).__name__}: {exc}"
