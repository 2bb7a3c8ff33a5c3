"""The coverage pass of one run: asked for once, and again when the code it measured has moved.

The fix loop ranks the code again every round; running the tests under
coverage every round would double a round's test time. The first ranking
with failures runs the pass (through the caller's sandbox port); later
rankings reuse its spectrum as long as every file it has lines for is as it
was, since its line numbers would point at other code otherwise. When the
state moves (a kept change to those files) the tests that still fail run
further than before, into code the first pass never saw (a fix of two defs:
the first one mended, the test now reaches the second), so the pass is asked
again, at most `AFTER_MOVES` times a run. So is a state whose failures are other than the pass ran
for after any file changed, measured or not: a name added to a module whose lines ran only at import
(outside every test's lines) lets the failing test run on into code it never reached. A pass in
which no failing test ran (the tests did not load: a module was missing) is
asked again, once, when the failures are no longer the ones it ran for: after
an install the same tests run, and their coverage ranks the code.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from greenloop.retrieval.index import RepoIndex
from greenloop_sandbox.report import TestFailure
from greenloop_sandbox.spectrum import Spectrum

log = logging.getLogger(__name__)

AFTER_MOVES = 3  # passes asked again after the measured files changed, per run (each costs a test run)


class SpectrumCache:
    """One run's coverage spectrum; `get` runs the pass on its first call with failures."""

    def __init__(self, run: Callable[[list[str]], Awaitable[Spectrum]] | None) -> None:
        self._run = run
        self.spectrum: Spectrum | None = None
        self._hashes: dict[str, str] = {}
        self._ran_for: set[tuple[str, str]] = set()  # the failures (id, message) the pass ran for
        self._version = -1  # the index's version it ran at
        self._again = 1  # how many more passes a pass without a failing test may be followed by
        self._after_moves = AFTER_MOVES

    async def get(self, index: RepoIndex, failures: Sequence[TestFailure]) -> Spectrum | None:
        """The spectrum for ranking, or None (no pass asked for, it failed, or its files changed since)."""
        if self._run is None or not failures:
            return None
        now = {(f.test_id, f.message) for f in failures}
        if self.spectrum is not None and not self.spectrum.failing and self._again and now != self._ran_for:
            self.spectrum, self._again = None, self._again - 1  # the tests may load now: measure them
        elif self.spectrum is not None and self._after_moves and (
                self._moved(index) or (now != self._ran_for and index.version != self._version)):
            self.spectrum, self._after_moves = None, self._after_moves - 1  # the state moved: measure it
        if self.spectrum is None:
            self._ran_for, self._version = now, index.version
            ids = list(dict.fromkeys(f.test_id for f in failures))
            self.spectrum = await self._run(ids)
            if self.spectrum.note:
                log.info("coverage pass: %s", self.spectrum.note)
            paths = {p for t in self.spectrum.tests for p in t.lines}
            self._hashes = {p: _digest(index, p) for p in paths}
        return self.current(index)  # None when the code moved on: its line numbers name other code now

    def current(self, index: RepoIndex) -> Spectrum | None:
        """The spectrum the last `get` measured, if a failing test ran and its files are as they were."""
        if self.spectrum is None or not self.spectrum.failing or self._moved(index):
            return None
        return self.spectrum

    def _moved(self, index: RepoIndex) -> bool:
        """Whether a file the pass has lines for is no longer as it measured it."""
        return any(_digest(index, p) != h for p, h in self._hashes.items())


def _digest(index: RepoIndex, path: str) -> str:
    return hashlib.sha1("\n".join(index.lines(path)).encode(), usedforsecurity=False).hexdigest()
