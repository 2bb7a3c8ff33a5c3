"""Which failed requests are worth another try, how long to wait, and what to tell the user."""

from __future__ import annotations

import email.utils
import json
import random
import time

import openai

from greenloop.llm.errors import ContextOverflow, LLMError
from greenloop.settings import LLMSettings

_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "grammar")


class FormatRejected(Exception):
    """The server does not support the response_format mode that was sent."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def error_text(exc: openai.APIStatusError) -> str:
    """The server's error message (and body) as one string."""
    body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
    return f"{exc.message} {body}"


def is_format_rejection(exc: BaseException) -> bool:
    """HTTP 400/422/500/501 whose message is about response_format (llama-cpp answers 500)."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500, 501):
        return False
    text = error_text(exc).lower()
    return any(word in text for word in _FORMAT_WORDS)


def retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header, if the server sent one."""
    headers = exc.response.headers
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def retryable(exc: BaseException) -> bool:
    """429, 408, 5xx, timeouts, connection errors, and garbled response bodies."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | openai.APIResponseValidationError | ValueError)


def delay_for(exc: BaseException, retries: int, settings: LLMSettings) -> float:
    """How long to wait before retry number `retries + 1`: Retry-After, else backoff with jitter."""
    if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
        hinted = retry_after(exc)
        if hinted is not None:
            return min(hinted, settings.backoff_max) + random.uniform(0, 0.05 * max(hinted, 0.1))
    base = min(settings.backoff * (2**retries), settings.backoff_max)
    return random.uniform(base / 2, base)


# How servers word a prompt longer than their window: llama.cpp ("exceeds the available context size"),
# OpenAI and vLLM ("maximum context length", code context_length_exceeded), others ("too long").
_TOO_LONG = ("context size", "context length", "context_length", "context window", "too long", "too many tokens")


def _too_long(message: str) -> bool:
    lowered = message.lower()
    return any(words in lowered for words in _TOO_LONG)


def as_llm_error(exc: BaseException, *, base_url: str, model: str, retries: int, timeout: float) -> LLMError:
    """A message that says what failed and what to do about it."""
    tried = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    if isinstance(exc, openai.APIStatusError):
        status, msg = exc.status_code, exc.message
        if status in (401, 403):
            text = (f"{base_url} refused the API key (HTTP {status}). Set OPENAI_API_KEY, "
                    "GREENLOOP_LLM__API_KEY or llm.api_key.")
        elif status == 404:
            text = (f"{base_url} has no model {model!r} or no chat endpoint (HTTP 404: {msg}). "
                    "Check llm.model, and that llm.base_url ends in /v1.")
        elif status == 429:
            text = f"{base_url} kept rate-limiting{tried} (HTTP 429: {msg}). Wait, or raise llm.max_retries."
        elif status >= 500:
            text = f"{base_url} failed{tried} (HTTP {status}: {msg}). Check the model server's logs."
        elif status in (400, 413) and _too_long(msg):
            return ContextOverflow(
                f"{base_url} refused the request as longer than the model's context window (HTTP {status}: "
                f"{msg}). Set llm.context_window to the server's window so greenloop fits requests before "
                "sending, or lower retrieval.context_tokens.", status=status)
        else:
            text = f"{base_url} rejected the request (HTTP {status}: {msg})."
        return LLMError(text, status=status)
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(f"{base_url} did not answer within {timeout:g}s{tried}. "
                        "Raise llm.timeout or check the server.")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return LLMError(f"Cannot reach {base_url}{tried} ({cause}). Is the model server running? "
                        "Check llm.base_url / OPENAI_BASE_URL.")
    return LLMError(f"{base_url} sent a reply greenloop cannot read{tried} ({type(exc).__name__}: {exc}).")
