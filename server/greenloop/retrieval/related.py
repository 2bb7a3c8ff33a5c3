"""The code a top-ranked def runs that its failing tests ran too: its callees (and theirs), for one request
that shows several defs together.

A fix of two defs often spans a def and a helper it calls, in another file (a formatter and the trim
it calls). The ranking scores each def on its own, so a small helper in a module the test does not
name falls far below the top, out of the packed code and out of every request. Here the top def's
calls are followed (resolved as the ranking's graph does, only through the files it imports) to the
defs a failing test executed, two calls deep; those are what the failing tests' coverage points at
together with the top def. Without a coverage spectrum (no runner for the language, the pass failed)
there are none: a def's static callees alone are too many to say which belong with it.
"""

from __future__ import annotations

from greenloop.retrieval.evidence import is_test_definition
from greenloop.retrieval.executed import ochiai
from greenloop.retrieval.graph import resolve
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition, Location
from greenloop_sandbox.spectrum import Spectrum

DEPTH = 2  # calls followed from the top def
LIMIT = 8  # callees returned
_FUNCTIONS = ("function", "method")


def executed_callees(index: RepoIndex, top: Location, spectrum: Spectrum | None) -> list[Location]:
    """The functions `top` calls (up to DEPTH calls deep, through executed defs) that a failing test
    executed: nearest first, then the most suspicious (Ochiai), then the smallest; role "callee"."""
    seed = next((d for d in index.definitions(top.path) if d.symbol == top.symbol and d.start_line == top.start_line),
                None)
    if seed is None or spectrum is None:
        return []
    ran = {s.definition.key: s.value for s in ochiai(index, spectrum)}
    found: dict[str, tuple[int, float, Definition]] = {}
    frontier = [seed]
    for hop in range(1, DEPTH + 1):
        nearer: list[Definition] = []
        for caller in frontier:
            for callee in _callees(index, caller):
                if callee.key in ran and callee.key != seed.key and callee.key not in found and not _inside(callee, seed):
                    found[callee.key] = (hop, ran[callee.key], callee)
                    nearer.append(callee)
        frontier = nearer
    chosen = sorted(found.values(), key=lambda f: (f[0], -f[1], f[2].end_line - f[2].start_line, f[2].key))
    return [_location(d, hop, value, seed) for hop, value, d in chosen[:LIMIT]]


def _callees(index: RepoIndex, caller: Definition) -> list[Definition]:
    """The functions `caller`'s body calls (its nested defs' calls too: they run when it does)."""
    own = [caller, *(d for d in index.definitions(caller.path) if _inside(d, caller))]
    out: list[Definition] = []
    for definition in own:
        for name in definition.calls:
            for target in resolve(index, name, definition, strict=True):
                if target.kind in _FUNCTIONS and not is_test_definition(target) and target not in out:
                    out.append(target)
    return out


def _inside(inner: Definition, outer: Definition) -> bool:
    return (inner.path == outer.path and outer.start_line <= inner.start_line and inner.end_line <= outer.end_line
            and inner.key != outer.key)


def _location(definition: Definition, hop: int, value: float, seed: Definition) -> Location:
    how = "calls it" if hop == 1 else f"reaches it in {hop} calls"
    return Location(definition.path, definition.symbol, definition.kind, definition.start_line, definition.end_line,
                    0.0, f"{seed.symbol} {how}; a failing test ran it (Ochiai {value:.2f})", role="callee")
