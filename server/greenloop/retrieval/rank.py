"""Failures -> ranked code locations: evidence signals (signals.py) weighed and summed.

A location's score is the weighted sum of its signals (`WEIGHTS`); the
test-side signals and the callee hop are scaled by the name's specificity, so
a hub (shared types, logging) ranks high only when the traceback ends in it.
Personalized PageRank over the reference graph fills the list after that.
With a coverage spectrum, that static ranking and the spectrum's own ranking
(Ochiai) are fused by their ranks (reciprocal rank fusion), not summed: the
two are different kinds of evidence on different scales.
Test code is never a target: `spec_locations` returns the failing tests,
their helpers and fixtures, for a prompt to show as the spec.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from greenloop.retrieval.candidates import Candidate, Evidence
from greenloop.retrieval.evidence import is_test_definition, tests_named
from greenloop.retrieval.executed import ochiai
from greenloop.retrieval.failures import Failure, from_reports, from_text
from greenloop.retrieval.graph import DefinitionGraph, personalized_pagerank
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition, Location, Signal
from greenloop.retrieval.signals import collect, late_modules, sizes
from greenloop_sandbox.report import TestFailure
from greenloop_sandbox.spectrum import Spectrum

__all__ = ["WEIGHTS", "is_test_definition", "locate", "rank", "spec_locations", "tests_named"]

# Weights of the signals (each signal is in [0, 1]); measured on realbugs and
# HumanEvalFix packed (docs/benchmarks/retrieval.md).
WEIGHTS: dict[str, float] = {
    "frame": 5.0,  # a project frame, deepest = 1.0, scaled by specificity (at least half)
    "spread": 2.0,  # Ochiai over tracebacks: in many failures' tracebacks, reached by few test files
    "test_calls": 1.0,  # the failing test calls (1.0) or names (0.5) it
    "failing_line": 1.0,  # named on the line where the test failed
    "imported": 0.5,  # the test file imports the name
    "callee": 1.5,  # called by code the test called or the traceback ran
    "nested": 1.5,  # defined inside such code
    "message": 0.5,  # named in the error message
    "writer": 3.0,  # writes an attribute a traceback frame reads (value_signals.py)
    "module": 4.0,  # in the module under test (named like the test file, or imported by it)
    "bm25": 1.5,  # BM25 score / best score, failure text as the query
    "name_like": 1.0,  # named like the failing test, or like a missing name on the failing line
    "size": 0.5,  # log of its own line count (longer code holds more bugs)
    "graph": 0.3,  # personalized PageRank from all of the above
}
# Reciprocal rank fusion of the static ranking and the coverage (Ochiai) ranking: score 1/(k + rank) in
# each, equal weights. A small k because only the first few places matter (docs/benchmarks/retrieval.md).
_FUSION_K = 1.0
SPECIFIC = frozenset({"test_calls", "failing_line", "imported", "callee", "nested", "message"})
_FRAME_FLOOR = 0.5  # a frame keeps half its weight however many test files reach its definition
_GRAPH_SEEDS = 30


async def locate(
    index: RepoIndex,
    failures: Sequence[TestFailure] | str,
    *,
    top_k: int = 10,
    weights: Mapping[str, float] | None = None,
    spectrum: Spectrum | None = None,
) -> list[Location]:
    """The `top_k` code locations (never test code) the failures are most likely about, best first.

    `spectrum` (the failing tests and their file-mates under coverage) adds the `executed` signal and a
    second ranking, fused with the static one by rank.
    """
    items = from_text(failures) if isinstance(failures, str) else from_reports(failures)
    async with index.lock:
        return await asyncio.to_thread(rank, index, items, top_k, weights, spectrum)


async def spec_locations(index: RepoIndex, failures: Sequence[TestFailure] | str) -> list[Location]:
    """The test code the failures come from (tests, their helpers, fixtures), role "spec"."""
    items = from_text(failures) if isinstance(failures, str) else from_reports(failures)
    async with index.lock:
        evidence = await asyncio.to_thread(collect, index, items)
    return list(evidence.spec.values())


def rank(
    index: RepoIndex,
    failures: Sequence[Failure],
    top_k: int,
    weights: Mapping[str, float] | None = None,
    spectrum: Spectrum | None = None,
) -> list[Location]:
    """Synchronous ranking (runs in a worker thread from `locate`)."""
    evidence = collect(index, failures)
    # A failing test that stopped on a name the code lacks ran only its set-up: what it executed says
    # nothing about the change, which adds code that never ran.
    stopped_early = 0 < evidence.failures == evidence.missing_name
    suspects = _executed(index, evidence, spectrum) if spectrum is not None and not stopped_early else {}
    chosen = WEIGHTS if weights is None else {**WEIGHTS, **weights}
    scored = fuse(evidence, chosen)
    _graph(index, evidence, scored, chosen)
    found = [_location(c, s, chosen, evidence) for c, s in scored.values()]
    found.sort(key=lambda loc: (-loc.score, loc.path, loc.start_line))
    if suspects:
        found = _fuse_ranks(found, suspects)
    return found[:top_k]


def _executed(index: RepoIndex, evidence: Evidence, spectrum: Spectrum) -> dict[str, float]:
    """The `executed` signal (Ochiai over the lines the failing and passing tests ran): definition key -> value."""
    failing, passing = len(spectrum.failing), len(spectrum.passing)
    values: dict[str, float] = {}
    for s in ochiai(index, spectrum):
        note = (f"line {s.line} ran in {s.failed} of {failing} failing and {s.passed} of {passing} "
                f"passing tests (Ochiai {s.value:.2f})")
        evidence.offer(s.definition, "executed", s.value, note)
        values[s.definition.key] = s.value
    # A traceback's frame ran in its failing test whatever coverage recorded: coverage.py sees nothing
    # while another tracer holds sys.settrace (debuggers, tracing libraries) or in a subprocess. Its
    # passing-test count is unknown, so it is taken as 0.
    failing = max(failing, evidence.failures)
    for key, count in evidence.in_traceback.items():
        candidate = evidence.candidates.get(key)
        if key in values or candidate is None or candidate.definition is None:
            continue
        value = count / math.sqrt(failing * count)
        note = f"in the traceback of {count} of {failing} failing tests; coverage did not record it (Ochiai {value:.2f})"
        evidence.offer(candidate.definition, "executed", value, note)
        values[key] = value
    late_modules(evidence)  # what only coverage found is in a module under test too
    sizes(index, evidence)  # the prior for the definitions only coverage found
    return values


def _fuse_ranks(found: list[Location], suspects: Mapping[str, float]) -> list[Location]:
    """Reciprocal rank fusion of the static order (`found`, best first) and the Ochiai order.

    Definitions with equal Ochiai share their places' mean rank (with one failing test, all that only it
    ran tie at 1.0). Code the failing tests did not run keeps only its static share: the fix of an
    omission, of code run in a subprocess or of a missing attribute may be in code that never ran.
    """
    places: dict[float, list[int]] = {}
    for place, ochiai_value in enumerate(sorted(suspects.values(), reverse=True), 1):
        places.setdefault(ochiai_value, []).append(place)
    shared = {v: sum(p) / len(p) for v, p in places.items()}  # a tie's mean place
    fused: list[tuple[float, int, Location]] = []
    for place, loc in enumerate(found, 1):
        value = suspects.get(loc.key)
        static = 1.0 / (_FUSION_K + place)
        if value is None:
            fused.append((static, place, replace(loc, score=static)))
            continue
        share = 1.0 / (_FUSION_K + shared[value])
        signals = tuple(replace(s, contribution=round(share, 4)) if s.name == "executed" else s for s in loc.signals)
        why = f"rank {place} by the static evidence and {shared[value]:g} by coverage; {loc.why}"
        fused.append((static + share, place, replace(loc, score=static + share, why=why, signals=signals)))
    fused.sort(key=lambda item: (-item[0], item[1]))
    return [loc for _, _, loc in fused]


def fuse(evidence: Evidence, weights: Mapping[str, float]) -> dict[str, tuple[Candidate, float]]:
    """Candidate key -> (candidate, weighted sum of its signals)."""
    return {key: (c, sum(_contributions(c, weights, evidence).values())) for key, c in evidence.candidates.items()}


def _contributions(candidate: Candidate, weights: Mapping[str, float], evidence: Evidence) -> dict[str, float]:
    specificity = 1.0
    if candidate.definition is not None and evidence.specificity is not None:
        specificity = evidence.specificity.of(candidate.definition.name)
    out: dict[str, float] = {}
    for signal, value in candidate.values.items():
        scale = specificity if signal in SPECIFIC else 1.0
        if signal == "frame":
            scale = _FRAME_FLOOR + (1 - _FRAME_FLOOR) * specificity
        out[signal] = weights.get(signal, 0.0) * value * scale
    return out


def _graph(
    index: RepoIndex, evidence: Evidence, scored: dict[str, tuple[Candidate, float]], weights: Mapping[str, float]
) -> None:
    """Personalized PageRank from the best candidates adds their graph neighbourhood (weakly)."""
    if weights.get("graph", 0.0) <= 0.0:
        return
    best = sorted((v for v in scored.values() if v[0].definition is not None and v[1] > 0), key=lambda v: -v[1])
    seeds: dict[str, tuple[Definition, float]] = {}
    for candidate, score in best[:_GRAPH_SEEDS]:
        assert candidate.definition is not None
        seeds[candidate.definition.key] = (candidate.definition, score)
    if not seeds:
        return
    graph = index.derived("graph", lambda: DefinitionGraph(index))
    ranks = personalized_pagerank(graph, seeds)
    top = max((value for key, (d, value) in ranks.items() if not is_test_definition(d)), default=0.0)
    if top <= 0.0:
        return
    for key, (definition, value) in ranks.items():
        if is_test_definition(definition) or value <= 0.0:
            continue
        evidence.offer(definition, "graph", value / top, "related by the reference graph")
        candidate = evidence.candidates[key]
        scored[key] = (candidate, sum(_contributions(candidate, weights, evidence).values()))


def _location(candidate: Candidate, score: float, weights: Mapping[str, float], evidence: Evidence) -> Location:
    parts = _contributions(candidate, weights, evidence)
    signals = tuple(
        Signal(name, round(candidate.values[name], 4), round(parts[name], 4), candidate.notes[name])
        for name in sorted(parts, key=lambda n: -parts[n])
    )
    why = "; ".join(s.note for s in signals[:3] if s.contribution > 0) or "no evidence"
    definition = candidate.definition
    if definition is None:
        symbol = f"{candidate.path}:{candidate.start}-{candidate.end}"
        return Location(candidate.path, symbol, "lines", candidate.start, candidate.end, score, why, signals=signals)
    return Location(
        definition.path, definition.symbol, definition.kind, definition.start_line, definition.end_line,
        score, why, signals=signals,
    )
