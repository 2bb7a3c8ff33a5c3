"""The LLM layer: one OpenAI-compatible chat client with structured output, retries and records."""

from greenloop.llm.cassette import Cassette
from greenloop.llm.client import LLMClient
from greenloop.llm.endpoint import Endpoint, open_llm, resolve_endpoint
from greenloop.llm.errors import ContextOverflow, LLMError, StructuredOutputError
from greenloop.llm.records import CallRecord, Usage, tokens_spent

__all__ = [
    "CallRecord",
    "Cassette",
    "ContextOverflow",
    "Endpoint",
    "LLMClient",
    "LLMError",
    "StructuredOutputError",
    "Usage",
    "open_llm",
    "resolve_endpoint",
    "tokens_spent",
]
