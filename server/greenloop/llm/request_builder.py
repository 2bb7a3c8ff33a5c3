"""The request a model call sends: messages fitted to the context window, seed, temperature, response_format."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from greenloop.llm.errors import ContextOverflow
from greenloop.llm.json_reply import schema_instruction
from greenloop.llm.records import Mode
from greenloop.llm.window import fit_messages
from greenloop.settings import LLMSettings

Messages = list[dict[str, str]]
STEP_HEADER = "X-Greenloop-Step"
STREAMED: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}


class RequestBuilder:
    """Builds the request bodies of one client's calls, fitted to its context window."""

    def __init__(self, settings: LLMSettings, *, context_window: int | None,
                 count: Callable[[Messages], Awaitable[int | None]] | None = None) -> None:
        self.settings = settings
        self.context_window = context_window  # tokens; None: not checked
        self.count = count  # the server's own token count, asked when the estimate says it may not fit

    async def fits(self, messages: Messages, *, step: str, max_tokens: int | None = None) -> bool:
        """Whether `messages` fit the context window whole, with room for the reply (nothing is sent)."""
        try:
            kept = await fit_messages(messages, self.context_window, max_tokens or self.settings.max_tokens, step,
                                      self.count)
        except ContextOverflow:
            return False
        return len(kept) == len(messages)

    async def text(self, messages: Messages, *, max_tokens: int | None, attempt: int, step: str) -> dict[str, Any]:
        """The request. One asked again gets the next seed and a higher temperature: the 0.5B model
        at 0.2 sent a refused reply back byte for byte, with the same seed and with the next one."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.temperature(attempt),
            "max_tokens": max_tokens or self.settings.max_tokens,
        }
        body["messages"] = await fit_messages(messages, self.context_window, body["max_tokens"], step, self.count)
        if self.settings.seed is not None:
            body["seed"] = self.settings.seed + attempt
        if self.settings.stop_repeats:
            body.update(STREAMED)
        return body

    def temperature(self, attempt: int) -> float:
        base = self.settings.temperature
        return max(base, min(1.0, base + self.settings.retry_temperature_step * attempt)) if attempt else base

    async def structured(
        self, messages: Messages, json_schema: dict[str, Any], *, mode: Mode, step: str, attempt: int
    ) -> dict[str, Any]:
        """The request for a reply in `json_schema`, asked the way `mode` says (response_format or prompt)."""
        if mode == "json_schema":
            name = re.sub(r"[^a-zA-Z0-9_-]", "_", step)[:64] or "reply"
            body = await self.text(messages, max_tokens=None, attempt=attempt, step=step)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": json_schema, "strict": False},
            }
            return body
        instructed = _with_instruction(messages, schema_instruction(json_schema))
        body = await self.text(instructed, max_tokens=None, attempt=attempt, step=step)
        if mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": json_schema}
        return body


def with_note(messages: Messages, note: str) -> Messages:
    """`note` appended to the last user message (or as a new one): a request asked again afresh."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            last = {**messages[i], "content": f"{messages[i].get('content', '')}\n\n{note}"}
            return [*messages[:i], last, *messages[i + 1 :]]
    return [*messages, {"role": "user", "content": note}]


def _with_instruction(messages: Messages, instruction: str) -> Messages:
    """`instruction` appended to the first user message (or as a new one).

    Not in the system message: the calls of one run then share their opening tokens (system prompt,
    failures, code), which servers with a prompt cache (llama.cpp, hosted APIs) do not read again.
    """
    for i, message in enumerate(messages):
        if message.get("role") == "user":
            first = {**message, "content": f"{message.get('content', '')}\n\n{instruction}"}
            return [*messages[:i], first, *messages[i + 1 :]]
    return [*messages, {"role": "user", "content": instruction}]
