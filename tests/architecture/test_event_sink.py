"""Results are values, events go to a sink: no function streams its events with its result last (event_sink.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = [ROOT / "server" / "greenloop", ROOT / "sandbox" / "greenloop_sandbox"]
STREAMS = {"AsyncIterator", "Iterator", "AsyncGenerator", "Generator", "AsyncIterable", "Iterable"}


def _names(node: ast.expr) -> set[str]:
    """The names in a union (`A | B | C`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) | _names(node.right)
    return {node.id} if isinstance(node, ast.Name) else set()


def mixed_streams(source: str) -> list[str]:
    """The functions of `source` whose return is a stream of events and something else (`Iterator[Event | X]`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.returns is None:
            continue
        ret = node.returns
        if isinstance(ret, ast.Subscript) and isinstance(ret.value, ast.Name) and ret.value.id in STREAMS:
            first = ret.slice.elts[0] if isinstance(ret.slice, ast.Tuple) else ret.slice
            names = _names(first)
            if "Event" in names and len(names) > 1:
                found.append(f"{node.name} (line {node.lineno})")
    return found


def test_no_function_streams_its_result_after_its_events() -> None:
    found = [f"{path.relative_to(ROOT)}: {name}" for base in PRODUCT for path in sorted(base.rglob("*.py"))
             for name in mixed_streams(path.read_text(encoding="utf-8"))]
    assert found == [], "return the result and emit the events to an EventSink (agent/event_sink.py)"


def test_the_check_finds_a_stream_with_its_result_last() -> None:
    source = ("async def a() -> AsyncIterator[Event | RoundResult]: ...\n"
              "def b() -> Iterator[Event | Stop]: ...\n"
              "async def c() -> AsyncIterator[Event]: ...\n"
              "async def d(events: EventSink) -> RoundResult: ...\n")
    assert mixed_streams(source) == ["a (line 1)", "b (line 2)"]
