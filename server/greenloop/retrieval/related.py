"""The code a top-ranked def runs that its failing tests ran too: its callees (and theirs), and the path
from the failing test's own calls down; for a request that shows several defs together.

A fix of two defs often spans a def and a helper it calls, in another file (a formatter and the trim
it calls). The ranking scores each def on its own, so a small helper in a module the test does not
name falls far below the top, out of the packed code and out of every request. Here the top def's
calls are followed (resolved as the ranking's graph does, only through the files it imports) to the
defs a failing test executed, two calls deep; those are what the failing tests' coverage points at
together with the top def. Without a coverage spectrum (no runner for the language, the pass failed)
there are none: a def's static callees alone are too many to say which belong with it.

The top def is not always on the path to the fix: a def reached only through a function value (a
filter passed in a parameter, a callback) is no static callee of it. `path_from_tests` starts where the
failing test starts instead: from each def the test calls that a failing test ran, the most suspicious
first, down its most suspicious executed callees (depth first), the order in which a reader follows
the test into the code.
"""

from __future__ import annotations

from collections.abc import Sequence

from greenloop.retrieval.evidence import is_test_definition, tests_named
from greenloop.retrieval.executed import ochiai
from greenloop.retrieval.graph import resolve
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition, Location
from greenloop_sandbox.spectrum import Spectrum

DEPTH = 2  # calls followed from the top def
PATH_DEPTH = 3  # calls followed from a failing test's own call
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


def path_from_tests(index: RepoIndex, test_ids: Sequence[str], spectrum: Spectrum | None) -> list[Location]:
    """The defs a failing test ran, from its own calls down (role "path"): each root, the most suspicious
    first, then its executed callees depth first (most suspicious, then smallest, first), PATH_DEPTH deep."""
    if spectrum is None:
        return []
    ran = {s.definition.key: s.value for s in ochiai(index, spectrum)}
    tests = {d.key: d for test_id in test_ids for d in tests_named(index, test_id)}
    roots = {c.key: c for t in tests.values() for c in _callees(index, t) if c.key in ran}
    order: dict[str, tuple[Definition, int]] = {}

    def visit(definition: Definition, hop: int) -> None:
        order[definition.key] = (definition, hop)
        if hop < PATH_DEPTH:
            for callee in _by_suspicion(_callees(index, definition), ran):
                if callee.key not in order and not _inside(callee, definition):
                    visit(callee, hop + 1)

    for root in _by_suspicion(list(roots.values()), ran):
        if root.key not in order:
            visit(root, 1)
    return [Location(d.path, d.symbol, d.kind, d.start_line, d.end_line, 0.0,
                     f"{hop} call(s) from the failing test; a failing test ran it (Ochiai {ran[d.key]:.2f})", role="path")
            for d, hop in order.values()][:LIMIT]


def _by_suspicion(definitions: list[Definition], ran: dict[str, float]) -> list[Definition]:
    found = [d for d in definitions if d.key in ran]
    return sorted(found, key=lambda d: (-ran[d.key], d.end_line - d.start_line, d.key))


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
