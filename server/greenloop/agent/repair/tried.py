"""One candidate as the records keep it: asked, rejected or tested, and what its tests gave."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Tried:
    """One candidate as the records keep it."""

    index: int
    seed: int | None
    temperature: float
    status: Literal["rejected", "tested"]
    reason: str = ""
    diff: str = ""
    diff_lines: int = 0
    scope: Literal["", "failing", "all"] = ""
    passed: int = 0
    failed: int = 0
    errors: int = 0
    green: bool = False
    further: int = 0  # its failing tests stopped later (> 0) or earlier (< 0) than the state's (progress.py)
    feedback: str = ""  # the test output, for the next round's prompt
    unchanged: bool = False  # the reply gave the code back as it was, and again when asked for a change
    change_kind: str = ""  # a small edit's kind or "model" (Approach.kind_of)
