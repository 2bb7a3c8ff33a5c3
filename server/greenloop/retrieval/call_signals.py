"""Signals along calls: what the failing tests call or name, one hop down from it, and a thin wrapper's delegates."""

from __future__ import annotations

from collections.abc import Iterable

from greenloop.retrieval.candidates import Evidence
from greenloop.retrieval.evidence import TestUse, is_test_definition
from greenloop.retrieval.graph import resolve
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition

_CONSTRUCTORS = ("__init__", "__new__", "constructor", "new")
_CLASS_SHARE = 0.3
_TEST_SIDE = ("test_calls", "failing_line", "imported")
_DELEGATION = 0.75  # how much of a thin wrapper's test evidence its delegates take  # what a class keeps of the evidence for it (its constructor gets the rest)


def _targets(index: RepoIndex, name: str, where: Definition | None) -> list[Definition]:
    """What a name resolves to, a class standing for its constructor too."""
    found = resolve(index, name, where)
    out = list(found)
    for target in found:
        if target.kind in ("class", "impl", "interface"):
            out.extend(
                d for d in index.definitions(target.path)
                if d.parent == target.symbol and d.name in _CONSTRUCTORS
            )
    return out


def _share(definition: Definition) -> float:
    return _CLASS_SHARE if definition.kind in ("class", "impl", "interface") else 1.0


def offer_test_names(
    index: RepoIndex, tests: list[Definition], test_files: list[str], use: TestUse, evidence: Evidence
) -> list[tuple[Definition, float]]:
    """Definitions the failing tests call or name, and those on the line where the failure stopped."""
    where = tests[0] if tests else None
    if where is None and test_files:  # tests with no definition of their own (`test('...', () => ...)`)
        where = Definition(test_files[0], "<module>", "<module>", "module", 1, 1, "")
    called: dict[str, tuple[Definition, float]] = {}
    names = dict(use.names)
    for name in use.failing_line:
        names.setdefault(name, 0.0)
    for name, strength in names.items():
        targets = [t for t in _targets(index, name, where) if not is_test_definition(t)]
        for target in targets:
            share = _share(target) / len(targets)
            if strength > 0:
                how = "called" if strength >= 1.0 else "named"
                evidence.offer(target, "test_calls", strength * share, f"{how} by the failing test {where.symbol if where else ''}".strip())
            if name in use.failing_line:
                evidence.offer(target, "failing_line", share, "named on the line where the test failed")
            if name in use.imported:
                evidence.offer(target, "imported", share, "imported by the failing test's file")
            old = called.get(target.key)
            value = max(strength, 1.0 if name in use.failing_line else 0.0) * share
            if old is None or value > old[1]:
                called[target.key] = (target, value)
    return list(called.values())


def offer_callees(index: RepoIndex, sources: Iterable[tuple[Definition, float]], evidence: Evidence) -> None:
    """One hop down from what the test called or the traceback ran: callees and nested definitions.

    The share a callee gets grows with its size next to the caller's: a thin
    wrapper's behaviour is its delegate's.
    """
    for source, strength in sources:
        own = own_lines(index, source)
        for name in source.calls or source.refs:
            targets = [t for t in resolve(index, name, source) if t.key != source.key]
            for target in targets:
                near = 1.0 if target.path == source.path else 0.5
                share = own_lines(index, target) / (own + own_lines(index, target))
                evidence.offer(target, "callee", strength * near * share / len(targets), f"called by {source.symbol}")
        for child in index.definitions(source.path):
            if child.parent == source.symbol and child.kind in ("function", "method"):
                share = own_lines(index, child) / (own + own_lines(index, child))
                evidence.offer(child, "nested", strength * share, f"defined inside {source.symbol}")


def apply_delegation(index: RepoIndex, called: list[tuple[Definition, float]], evidence: Evidence) -> None:
    """A thin wrapper the test calls hands part of its test evidence to the same-file code it delegates to."""
    for source, _strength in called:
        candidate = evidence.candidates.get(source.key)
        if candidate is None:
            continue
        own = own_lines(index, source)
        delegates = [
            t for name in source.calls for t in resolve(index, name, source) if t.path == source.path
        ] + [d for d in index.definitions(source.path) if d.parent == source.symbol]
        share = max((own_lines(index, d) / (own + own_lines(index, d)) for d in delegates), default=0.0)
        if share <= 0.5:
            continue
        for signal in _TEST_SIDE:
            if signal in candidate.values:
                candidate.values[signal] *= 1.0 - _DELEGATION * share
                candidate.notes[signal] += f" (a thin wrapper: {share:.0%} of the code is its delegates')"


def own_lines(index: RepoIndex, definition: Definition) -> int:
    """Lines of a definition less those of the definitions nested in it (at least 1)."""
    nested = sum(
        d.end_line - d.start_line + 1 for d in index.definitions(definition.path) if d.parent == definition.symbol
    )
    return max(1, definition.end_line - definition.start_line + 1 - nested)


def offer_message_names(index: RepoIndex, use: TestUse, evidence: Evidence) -> None:
    for name in use.message:
        targets = index.named(name)
        if 0 < len(targets) <= 3:
            for target in targets:
                evidence.offer(target, "message", 1.0 / len(targets), "named in the failure message")
