"""The traceback's signal (`frame`): project frames, deepest first; and the test line where a failure stopped."""

from __future__ import annotations

import re

from greenloop.retrieval.candidates import Evidence
from greenloop.retrieval.evidence import is_test_definition
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.model import Definition, Frame

_WINDOW = 8  # lines either side of a frame that has no enclosing definition
# a block that expects its body to raise (or warn): pytest, unittest
_RAISES_BLOCK = re.compile(r"^\s*(?:async\s+)?with\s+.*\b(?:raises|warns|assertRaises\w*|assertWarns\w*)\s*\(")
_RAISES_BODY = 8  # lines of its body read at most
_LOOP = re.compile(r"(?:async\s+)?(?:while|for|loop|do)\b")


def offer_frames(
    index: RepoIndex, frames: list[Frame], evidence: Evidence, *, hung: bool = False
) -> list[tuple[Definition, float]]:
    """Project frames outside test code, deepest first (1, 1/2, 1/3, ...); frames in test code are the spec.

    In a test that hung, the deepest frame is wherever the clock ran out, most often a callee that
    returns normally; the loop that never ends is in the deepest frame that stands in a loop, so
    that frame counts as the deepest.
    """
    framed: list[tuple[Definition, float]] = []
    project = [f for f in frames if not is_test_path(f.path)]
    looping = next((f for f in project if _in_loop(index, f)), None) if hung else None
    if looping is not None:
        project = [looping, *(f for f in project if f is not looping)]
    for depth, frame in enumerate(project):
        where = f"{frame.path}:{frame.line}"
        note = f"deepest project frame ({where})" if depth == 0 else f"traceback frame {depth + 1} ({where})"
        if frame is looping:
            note = f"the loop the hung test was in ({where})"
        value = 1.0 / (1 + depth)
        definition = index.enclosing(frame.path, frame.line)
        if definition is None:
            start, end = _window(index, frame)
            evidence.offer_lines(frame.path, start, end, "frame", value, note)
            continue
        evidence.offer(definition, "frame", value, note)
        if not is_test_definition(definition):
            framed.append((definition, value))
    for frame in frames:
        if is_test_path(frame.path) and index.enclosing(frame.path, frame.line) is None:
            start, end = _window(index, frame)
            evidence.offer_lines(frame.path, start, end, "frame", 0.2, f"test code in the traceback ({frame.path}:{frame.line})")
    return framed


def _in_loop(index: RepoIndex, frame: Frame) -> bool:
    """The frame's line is a loop's header or inside a loop's body (by indentation, within its definition)."""
    definition = index.enclosing(frame.path, frame.line)
    lines = index.lines(frame.path)
    if definition is None or not 0 < frame.line <= len(lines):
        return False
    indent = len(lines[frame.line - 1]) - len(lines[frame.line - 1].lstrip())
    for number in range(frame.line, definition.start_line - 1, -1):
        row = lines[number - 1]
        depth = len(row) - len(row.lstrip())
        if not row.strip() or (number != frame.line and depth >= indent):
            continue
        if _LOOP.match(row.lstrip()):
            return True
        indent = depth
    return False


def failing_source_line(index: RepoIndex, frames: list[Frame]) -> str:
    """The source line of the deepest frame in test code: where the test stopped (any runner).

    A test that stopped at `with pytest.raises(E):` (or `self.assertRaises`) stopped because
    the block's body did not raise: the call it is about is in the body, so the body counts too.
    """
    for frame in frames:
        if is_test_path(frame.path) or _in_test_definition(index, frame):
            lines = index.lines(frame.path)
            if not 0 < frame.line <= len(lines):
                return ""
            line = lines[frame.line - 1]
            return "\n".join([line, *_raises_body(lines, frame.line)]) if _RAISES_BLOCK.match(line) else line
    return ""


def _raises_body(lines: list[str], line: int) -> list[str]:
    """The lines of the block a `with` statement at `line` (1-based) opens."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    body: list[str] = []
    for text in lines[line : line + _RAISES_BODY]:
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        body.append(text)
    return body


def _in_test_definition(index: RepoIndex, frame: Frame) -> bool:
    definition = index.enclosing(frame.path, frame.line)
    return definition is not None and is_test_definition(definition)


def _window(index: RepoIndex, frame: Frame) -> tuple[int, int]:
    symbols = index.symbols(frame.path)
    last = max(symbols.line_count if symbols else frame.line, frame.line)
    return max(1, frame.line - _WINDOW), min(last, frame.line + _WINDOW)
