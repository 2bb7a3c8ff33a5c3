"""The LLM layer's errors: what a user can act on when a model call fails."""

from __future__ import annotations

from greenloop.errors import EnvironmentProblem


class LLMError(EnvironmentProblem):
    """A model call failed for good (after retries, or for a reason retrying cannot fix)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class StructuredOutputError(LLMError):
    """The model never produced JSON that validates; carries every raw reply it gave."""

    exit_code = 1  # the model answered: the run went on and did not get green

    def __init__(self, message: str, raw_replies: list[str]) -> None:
        super().__init__(message)
        self.raw_replies = raw_replies


class ContextOverflow(LLMError):
    """A request does not fit the model's context window: refused before sending, or by the server."""
