"""Context windows: a request that would not fit the model's loses its earlier exchanges, or fails clearly.

llama-cpp-python's server answers a prompt longer than its window by dropping the
stream with nothing in it (the embedded model's window is 8,192 tokens; a fix-loop
repair of a 201-line test file reached 8,438). Counts here are cl100k estimates
(`tokens.py`), which ran about 15% under Qwen2.5-Coder's own count on that request,
hence the margin.
"""

from __future__ import annotations

from greenloop.llm import tokens
from greenloop.llm.errors import ContextOverflow

Messages = list[dict[str, str]]
MARGIN = 1.25  # estimated tokens x MARGIN must fit: the estimate is not the model's tokenizer
REPLY_SHARE = 4  # at least window // REPLY_SHARE tokens (or max_tokens, if less) are left for the reply


def fit_messages(messages: Messages, window: int | None, max_tokens: int, step: str) -> Messages:
    """`messages`, or without the exchanges between the first and the last user message until it fits.

    A repair conversation (request, reply, "that did not work", reply, ...) keeps its first request
    and its latest note; the replies in between go first, oldest first; an error when even that
    does not fit (ContextOverflow, before anything is sent).
    """
    if window is None:
        return messages
    budget = window - min(max_tokens, window // REPLY_SHARE)
    if _estimate(messages) <= budget:
        return messages
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if len(users) >= 2:
        head, tail = messages[: users[0] + 1], messages[users[-1] :]
        middle = messages[users[0] + 1 : users[-1]]
        while middle and _estimate([*head, *middle, *tail]) > budget:
            middle = middle[2:] if len(middle) > 1 else []  # a reply and the note after it
        if _estimate([*head, *middle, *tail]) <= budget:
            return [*head, *middle, *tail]
        messages = [*head, *tail]
    raise ContextOverflow(
        f"The request for step {step!r} is about {_estimate(messages)} tokens (estimated), more than the "
        f"model's context window of {window} tokens leaves after room for the reply. Lower "
        "retrieval.context_tokens, narrow the run (fewer or smaller files), or use a model with a larger "
        "window (llm.context_window says how large the model's is)."
    )


def _estimate(messages: Messages) -> int:
    return int(tokens.count_messages(messages) * MARGIN)
