"""The `executed` signal: spectrum-based fault localization (Ochiai) over per-test coverage.

A line's suspiciousness is Ochiai's ef / sqrt((ef + nf) * (ef + ep)): ef and
ep are the failing and passing tests that executed it, nf the failing tests
that did not. A definition takes the best of its own lines (lines of nested
definitions are theirs; a `def` line runs when its parent runs, so it counts
for the parent). Static evidence cannot tell code a test runs from code it
merely imports; this can, three calls below the test and with no frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from greenloop.retrieval.evidence import is_test_definition
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition
from greenloop_sandbox.spectrum import Spectrum


@dataclass(frozen=True)
class Suspicion:
    """One definition's best line: its Ochiai value and counts, for the note."""

    definition: Definition
    value: float
    line: int
    failed: int  # failing tests that ran that line
    passed: int  # passing tests that ran it


def ochiai(index: RepoIndex, spectrum: Spectrum) -> list[Suspicion]:
    """Every non-test definition some failing test executed, with its best line's Ochiai value."""
    failing, passing = spectrum.failing, spectrum.passing
    if not failing:
        return []
    ef = _counts(t.lines for t in failing)
    ep = _counts(t.lines for t in passing)
    best: dict[str, Suspicion] = {}
    for path, lines in ef.items():
        if path not in index:
            continue
        owner = _owners(index, path)
        for line, failed in lines.items():
            definition = owner.get(line)
            if definition is None or is_test_definition(definition):
                continue
            passed = ep.get(path, {}).get(line, 0)
            value = failed / math.sqrt(len(failing) * (failed + passed))
            old = best.get(definition.key)
            if old is None or (value, -line) > (old.value, -old.line):
                best[definition.key] = Suspicion(definition, value, line, failed, passed)
    return list(best.values())


def line_scores(spectrum: Spectrum, path: str) -> dict[int, float]:
    """Ochiai of each line of `path` a failing test executed (the lines of the small edits' order)."""
    failing = spectrum.failing
    ef = _counts(t.lines for t in failing).get(path, {})
    ep = _counts(t.lines for t in spectrum.passing).get(path, {})
    return {line: failed / math.sqrt(len(failing) * (failed + ep.get(line, 0))) for line, failed in ef.items()}


def _counts(runs: Iterable[dict[str, list[int]]]) -> dict[str, dict[int, int]]:
    """path -> line -> how many of the tests executed it."""
    out: dict[str, dict[int, int]] = {}
    for lines in runs:
        for path, numbers in lines.items():
            into = out.setdefault(path, {})
            for n in set(numbers):
                into[n] = into.get(n, 0) + 1
    return out


def _owners(index: RepoIndex, path: str) -> dict[int, Definition]:
    """line -> the innermost definition whose body holds it (a definition's first line is its parent's)."""
    def make() -> dict[int, Definition]:
        owner: dict[int, Definition] = {}
        for definition in sorted(index.definitions(path), key=lambda d: (d.start_line, -d.end_line)):
            for line in range(definition.start_line + 1, definition.end_line + 1):
                owner[line] = definition  # later (inner) definitions overwrite their parents' lines
        return owner

    return index.derived(f"line owners:{path}", make)
