"""Getting a validated object out of a model's reply text (fences, prose, small slips)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class ReplyError(ValueError):
    """The reply is unusable; the message is written for the model (it is sent back)."""


def _spans(text: str, openers: str) -> list[str]:
    """Balanced spans starting with one of `openers`, string-aware, in order of appearance."""
    out: list[str] = []
    i = misses = 0
    while i < len(text) and len(out) < 8 and misses < 8:
        if text[i] not in openers:
            i += 1
            continue
        end = _balanced_end(text, i)
        if end is None:
            misses += 1  # bounded: a long unclosed reply must not cost quadratic time
            i += 1
            continue
        out.append(text[i : end + 1])
        i = end + 1
    return out


def _balanced_end(text: str, start: int) -> int | None:
    depth, in_str, escaped = 0, False, False
    for j in range(start, len(text)):
        ch = text[j]
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return j
    return None


def _lenient_loads(candidate: str) -> Any:
    """json.loads, then without trailing commas, then as a Python literal (True/None/'quotes').

    Raw newlines and tabs inside strings are accepted (`strict=False`): small models write them,
    and llama.cpp's JSON grammar lets them through.
    """
    try:
        return json.loads(candidate, strict=False)
    except json.JSONDecodeError as first:
        fixed = _TRAILING_COMMA.sub(r"\1", candidate)
        try:
            return json.loads(fixed, strict=False)
        except json.JSONDecodeError:
            pass
        try:
            value = ast.literal_eval(fixed)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise first from None
        if isinstance(value, dict | list):
            return json.loads(json.dumps(value))
        raise first from None


def extract_json(text: str, openers: str = "{[") -> Any:
    """The JSON value in a reply: whole text, fenced block, or the first balanced span in prose.

    `openers` limits what counts: "{" when an object is expected, so a list inside
    prose is not mistaken for the answer.
    """
    stripped = text.strip()
    if not stripped:
        raise ReplyError("The reply was empty; a JSON object was expected.")
    last_error: json.JSONDecodeError | None = None
    for candidate in [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]:
        if candidate and candidate[0] in openers:
            try:
                return _lenient_loads(candidate)
            except json.JSONDecodeError as exc:
                last_error = exc
    first = min((i for i in (stripped.find(o) for o in openers) if i >= 0), default=-1)
    if first >= 0 and _balanced_end(stripped, first) is None:
        # everything after the first opener is inside it: inner spans are fragments, not answers
        raise ReplyError(
            "The JSON in the reply is cut off (brackets or quotes are not closed). "
            "Reply with the complete JSON object; keep it shorter if needed."
        )
    for candidate in _spans(stripped, openers):
        try:
            return _lenient_loads(candidate)
        except json.JSONDecodeError as exc:
            last_error = exc
    if last_error is not None:
        raise ReplyError(f"The reply is not valid JSON: {last_error.msg} at line {last_error.lineno} "
                         f"column {last_error.colno}.")
    raise ReplyError("The reply contains no JSON object. Reply with only the JSON object.")


def describe_validation(exc: ValidationError, limit: int = 12) -> str:
    """A compact list of what is wrong, one line per problem, for the model to fix."""
    lines = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"- {where}: {err['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        lines.append(f"- ... and {more} more")
    return "The JSON does not match the schema:\n" + "\n".join(lines)


def parse_reply(text: str, schema: type[T]) -> T:
    """Extract and validate; raises ReplyError with a message meant for the model."""
    value = extract_json(text, "{")
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        raise ReplyError(describe_validation(exc)) from exc


def schema_instruction(schema: dict[str, Any]) -> str:
    """The prompt text that asks for JSON matching `schema` (for servers without a schema response_format)."""
    return (
        "Reply with a single JSON object and nothing else: no prose, no code fences. "
        "It must match this JSON schema:\n" + json.dumps(schema, separators=(",", ":"))
    )


def retry_instruction(problem: str) -> str:
    """The note on a request asked again without its unusable reply (one that looped, say)."""
    return (
        f"An earlier reply to this request could not be used. {problem}\n"
        "Reply with only the complete JSON object that matches the schema."
    )


def repair_instruction(problem: str) -> str:
    """The follow-up message that sends a validation problem back to the model."""
    return (
        f"Your previous reply could not be used. {problem}\n"
        "Reply again with only the corrected, complete JSON object that matches the schema."
    )
