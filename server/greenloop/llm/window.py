"""Context windows: a request that would not fit the model's loses its earlier exchanges, or fails clearly.

llama-cpp-python's server answers a prompt longer than its window by dropping the
stream with nothing in it (the embedded model's window is 8,192 tokens; a fix-loop
repair of a 201-line test file reached 8,438). Counts here are cl100k estimates
(`greenloop/tokens.py`), which ran about 15% under Qwen2.5-Coder's own count on that request,
hence the margin; a server with its own tokenizer (`server_tokens.py`) is asked before refusing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from greenloop import tokens
from greenloop.llm.errors import ContextOverflow

Messages = list[dict[str, str]]
MARGIN = 1.25  # estimated tokens x MARGIN must fit: the estimate is not the model's tokenizer
REPLY_SHARE = 4  # at least window // REPLY_SHARE tokens (or max_tokens, if less) are left for the reply


async def fit_messages(
    messages: Messages, window: int | None, max_tokens: int, step: str,
    exact: Callable[[Messages], Awaitable[int | None]] | None = None,
) -> Messages:
    """`messages`, or without the exchanges between the first and the last user message until it fits.

    A repair conversation (request, reply, "that did not work", reply, ...) keeps its first request
    and its latest note; the replies in between go first, oldest first; an error when even that
    does not fit (ContextOverflow, before anything is sent). Each message is counted once. When the
    estimate says it may not fit, `exact` (the server's own tokenizer, if it has one) decides first.
    """
    if window is None:
        return messages
    budget = window - min(max_tokens, window // REPLY_SHARE)
    costs = [_cost(m) for m in messages]
    if _scaled(costs) <= budget:
        return messages
    if exact is not None and (counted := await exact(messages)) is not None and counted <= budget:
        return messages  # the model's own count needs no margin
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    keep = list(range(len(messages)))
    if len(users) >= 2:
        middle = list(range(users[0] + 1, users[-1]))
        kept = [*range(users[0] + 1), *range(users[-1], len(messages))]
        while middle and _scaled([costs[i] for i in [*kept, *middle]]) > budget:
            middle = middle[2:]  # a reply and the note after it
        keep = sorted([*kept, *middle])
        if _scaled([costs[i] for i in keep]) <= budget:
            return [messages[i] for i in keep]
        keep = kept
    raise ContextOverflow(
        f"The request for step {step!r} is about {_scaled([costs[i] for i in keep])} tokens (estimated), more "
        f"than the model's context window of {window} tokens leaves after room for the reply. Lower "
        "retrieval.context_tokens, narrow the run (fewer or smaller files), or use a model with a larger "
        "window (llm.context_window says how large the model's is)."
    )


def _cost(message: dict[str, str]) -> int:
    return tokens.count_text(message.get("content") or "") + tokens.PER_MESSAGE_OVERHEAD


def _scaled(costs: list[int]) -> int:
    """A request's estimated tokens (as `tokens.count_messages` counts them) with the margin."""
    return int((sum(costs) + 3) * MARGIN)


def _estimate(messages: Messages) -> int:
    return _scaled([_cost(m) for m in messages])
