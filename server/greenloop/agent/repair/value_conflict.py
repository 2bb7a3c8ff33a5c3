"""A value conflict: a failing check's call, the value the code gave and the one the check expects, and the two sides.

The type the verdict modules share (verdicts.py finds conflicts and asks, answers.py reads the reply, settle.py
decides), kept below all three.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from greenloop.agent.repair.check_statements import Check

Side = Literal["code", "test"]  # the side the request is on: the code's value, or the test's expectation
Judged = dict[tuple[str, str, str], Side | None]  # a conflict's (call, got, want) -> the side the request is on
# a value longer than this is not asked for as itself: written out, fizzbuzz(100)'s 800 characters ran
# past verdicts.VERDICT_TOKENS in both questions; an expression (a comprehension) says it in one line
LONG_VALUE = 200


def value_of(text: str) -> object | None:
    """A Python literal's value (None when it is not one, or holds pytest's `...` for a value cut short)."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return None if _cut(value) else value


def _cut(value: object) -> bool:
    if value is Ellipsis:
        return True
    if isinstance(value, dict):
        return any(_cut(k) or _cut(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_cut(v) for v in value)
    return False


@dataclass(frozen=True)
class Conflict:
    """A failing `assert f(<literals>) == <literal>`: what the code gave against what the check expects."""

    check: Check
    call: str  # the checked expression, as the test writes it
    got: str  # the code's value as pytest printed it (a Python literal), or the exception it raised
    want: str  # the expected literal, as the test writes it
    raised: bool  # the code raised `got` instead of returning
    statement: str  # the check, dedented
    place: tuple[int, int, int, int]  # the expected literal in `statement`: 1-based line, col, end line, end col

    @property
    def key(self) -> tuple[str, str, str]:
        return self.call, self.got, self.want

    @property
    def long(self) -> bool:
        """Either value is too long to ask the model to write out (LONG_VALUE)."""
        return max(len(self.got), len(self.want)) > LONG_VALUE

    def expecting_code(self) -> str:
        """The check rewritten to expect what the code gave (a raise becomes `pytest.raises`)."""
        if self.raised:
            return f"with pytest.raises({self.got}):\n    {self.call}"
        rows = self.statement.split("\n")
        line, col, end_line, end_col = self.place
        head, tail = rows[line - 1][:col], rows[end_line - 1][end_col:]
        rows[line - 1 : end_line] = [head + _literal(self.got) + tail]
        return "\n".join(rows)


def _literal(got: str) -> str:
    """The code's value as the check's new expectation; a float pytest printed long is compared approximately."""
    value = value_of(got)
    if isinstance(value, float) and len(repr(value)) > 12:
        return f"pytest.approx({value:.10g})"
    return got
