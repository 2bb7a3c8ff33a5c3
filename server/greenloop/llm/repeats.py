"""Verbatim loops at the end of a streamed reply: where a model started repeating itself.

A reply whose tail is the same block over and over says nothing more with each copy, so the
client stops the stream once the run is long enough to be sure, and keeps one copy.
Why and the measurement: docs/decisions/2026-11-llm-stop-repeats.md.
"""

from __future__ import annotations

MIN_PERIOD = 8  # characters; shorter runs (----, 0, 0, 0) are too often real content
MAX_PERIOD = 1024
MIN_COPIES = 4
MIN_SPAN = 800  # characters the repeated run must cover before the reply is stopped
CHECK_EVERY = 256  # characters of new text between checks of a growing reply


def loop_start(text: str) -> int | None:
    """The end of the first copy of the repeated run that ends `text`, or None when it does not loop.

    `text[:loop_start(text)]` is the reply with the loop reduced to one copy.
    """
    n = len(text)
    for period in range(MIN_PERIOD, min(MAX_PERIOD, n // MIN_COPIES) + 1):
        span = max(MIN_COPIES * period, MIN_SPAN)
        if span > n:
            return None  # spans only grow with the period
        if text[n - span : n - period] == text[n - span + period :]:
            start = n - span
            while start > 0 and text[start - 1] == text[start - 1 + period]:
                start -= 1
            line_end = text.rfind("\n", start + 1, start + period + 1)  # end the copy at a line break
            return line_end + 1 if line_end >= 0 else start + period
    return None


def trim_loop(text: str) -> str:
    """`text` with a repeated run at its end reduced to one copy."""
    cut = loop_start(text)
    return text if cut is None else text[:cut]


_WINDOW = MIN_COPIES * MAX_PERIOD  # the longest tail a loop needs before it is seen


class LoopWatch:
    """Fed a growing reply chunk by chunk; says when its tail has become a loop.

    It keeps only the last `_WINDOW` characters, so a long reply costs linear time.
    """

    def __init__(self) -> None:
        self._tail = ""
        self._fresh = 0  # characters since the last check

    def looping(self, chunk: str) -> bool:
        self._tail = (self._tail + chunk)[-_WINDOW:]
        self._fresh += len(chunk)
        if self._fresh < CHECK_EVERY or len(self._tail) < MIN_SPAN:
            return False
        self._fresh = 0
        return loop_start(self._tail) is not None
