"""A rung of the repair ladder: when it applies to a state, and the approaches it brings (what the ladder orders).

Every rung is one module in `rungs/` with one `RUNG`; the order is `ladder.py`'s list. A rung's
`applies` reads the state (`LadderState`: the failures, the ranked code, the working copy) and gives
the approaches it brings there, none when it does not apply; how each is asked and read is its form
(approach.py). `place` puts them on the ladder: after the rungs before it, unless the rung says
otherwise (the failing tests' rung goes right after the first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.check_statements import Check
from greenloop.agent.repair.places import known_path
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Location, language_of
from greenloop_sandbox import TestReport

_METHOD = re.compile(r"^\s+(?:async\s+)?def\s")
FILE_ROUTE_LINES = 400  # longer files are not asked for whole
UNSHOWN = ("callee", "path", "ranked")  # location roles retrieval adds past the code a prompt shows (material.py)


@dataclass
class LadderState:
    """What the rungs read of one state: the failures, the ranked code and the working copy."""

    locations: list[Location]
    report: TestReport
    copy: WorkingCopy
    tests: TestFiles
    failing_tests: Sequence[Target] = ()  # the failing test functions (tests that may change)
    checks: Sequence[Check] = ()  # the statements the failing tests stopped at (tests that may change)
    declared: Sequence[str] = field(default_factory=tuple)  # the project's declared requirements not installed

    @cached_property
    def sources(self) -> list[Location]:
        """The ranked code the prompt shows, outside the tests, else the source files the failures name."""
        found = [loc for loc in self.locations if loc.role not in UNSHOWN and self._code(loc)]
        return found or _imported_sources(self.report, self.copy, self.tests)

    @cached_property
    def unshown(self) -> list[Location]:
        """Functions past the shown code (roles "callee", "path", "ranked"): what a request of several defs may add."""
        return [loc for loc in self.locations if loc.role in UNSHOWN and loc.kind in ("function", "method")
                and self._code(loc)]

    def _code(self, loc: Location) -> bool:
        return not self.tests.is_test(loc.path) and self.copy.read(loc.path) is not None

    @cached_property
    def functions(self) -> list[Location]:
        """The ranked functions and methods (a python class with no methods counts)."""
        return [loc for loc in self.sources if loc.kind in ("function", "method") or _fields_only(self.copy, loc)]

    def lines(self, path: str) -> int:
        return len((self.copy.read(path) or "").splitlines())


class Rung:
    """One rung: its name (what `loop.rungs_off` names), when it applies and what it brings."""

    name = ""

    def applies(self, state: LadderState) -> list[Approach]:
        """The approaches this rung brings to the state, in order; [] when it does not apply."""
        raise NotImplementedError

    def place(self, steps: list[Approach], state: LadderState) -> list[Approach]:
        """The ladder with this rung's approaches put in: after the rungs before it."""
        return [*steps, *self.applies(state)]


def target_of(loc: Location) -> Target:
    return Target(loc.path, loc.symbol, loc.kind, loc.start_line, loc.end_line)


def _fields_only(copy: WorkingCopy, loc: Location) -> bool:
    """A python class with no methods of its own (a dataclass, a named tuple, an enum): its
    constructor is its fields, so the class itself is the unit to rewrite, not another class's method."""
    if loc.kind != "class" or not loc.path.endswith((".py", ".pyi")):
        return False
    rows = (copy.read(loc.path) or "").splitlines()[loc.start_line : loc.end_line]
    return not any(_METHOD.match(row) for row in rows)


def _imported_sources(report: TestReport, copy: WorkingCopy, tests: TestFiles) -> list[Location]:
    """Source files named in the failures, when retrieval found no code outside the tests."""
    found: list[Location] = []

    def lines(path: str) -> int:
        return len((copy.read(path) or "").splitlines())

    for failure in report.failures:
        for path in re.findall(r"([\w./-]+\.\w+)", f"{failure.traceback}\n{failure.message}"):
            known = known_path(copy.paths(), path)
            if known and not tests.is_test(known) and language_of(known) and all(f.path != known for f in found):
                found.append(Location(known, known, "module", 1, lines(known), 0.0, "named"))
    if not found:
        code = [p for p in copy.paths() if language_of(p) and not tests.is_test(p)]
        if len(code) <= 3:  # a tiny project: its source files are the candidates
            found = [Location(p, p, "module", 1, lines(p), 0.0, "only source") for p in code]
    return found
