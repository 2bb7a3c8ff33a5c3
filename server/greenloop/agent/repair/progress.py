"""How far the failing tests got: a candidate whose tests stop later in the same tests passes more of their checks.

A test with many checks fails at its first wrong one, so two candidates that fail the same tests
look the same by counts; the one whose tests stopped at a later line got more checks right.
Lines are read in the round's starting state: a candidate that changed a test file (generation's
own tests) has its lines mapped back through a line diff, so a line it inserted moves nothing.
A module the state's failures said was missing that the candidate's no longer name is a step too:
the tests got past that import (PySnooper's needs four packages; each stops collection alone). So is a
name a project module lacked (`missing_names`) that the candidate's failures no longer name: the tests
got past it to what they check (rungs/missing_name.py).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from greenloop_sandbox import TestReport
from greenloop_sandbox.languages import languages

# Python's words for a name a module lacks: an attribute read off the module, or a name imported from it
_NO_ATTRIBUTE = re.compile(r"module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")
_NO_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'")
Reached = Mapping[str, int]  # failing test id -> the line in its own file where it stopped (starting state)


def reached(report: TestReport, before: Mapping[str, str] | None = None,
            after: Mapping[str, str] | None = None) -> dict[str, int]:
    """Where each failing test stopped in its own file, as a line of `before` (the round's start).

    `before`/`after`: the test files' texts at the start and in the candidate, for those it changed.
    """
    out: dict[str, int] = {}
    for failure in report.failures:
        own = failure.test_id.split("::", 1)[0]
        if not failure.file or not failure.line or not own or not (failure.file == own or own.endswith(failure.file)):
            continue
        line = failure.line
        if before is not None and after is not None and failure.file in after and failure.file in before:
            line = _old_line(before[failure.file], after[failure.file], line)
        out[failure.test_id] = line
    return out


def _old_line(old: str, new: str, line: int) -> int:
    """`line` of `new` as a line of `old`: unchanged lines map exactly, a changed or inserted one to the
    start of the old lines it replaced."""
    if old == new:
        return line
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        if j1 <= line - 1 < j2 or (tag == "insert" and j1 == line - 1):
            return i1 + (line - 1 - j1) + 1 if tag == "equal" else i1 + 1
    return line


def further(candidate: TestReport, cand_reached: Reached, state: TestReport, state_reached: Reached) -> int:
    """How much further the candidate's failing tests got than the state's: the count of tests that
    stopped later, or minus the count that stopped earlier when any did (0 when the failing tests differ)."""
    if {f.test_id for f in candidate.failures} != {f.test_id for f in state.failures}:
        return 0
    common = set(cand_reached) & set(state_reached)
    earlier = sum(cand_reached[t] < state_reached[t] for t in common)
    later = sum(cand_reached[t] > state_reached[t] for t in common)
    got_past = missing(state) - missing(candidate) or missing_names(state) - missing_names(candidate)
    return -earlier if earlier else later or int(bool(got_past))


def missing(report: TestReport) -> set[str]:
    """The modules the report's failures say are not installed (by each language's message)."""
    found: set[str] = set()
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        for language in languages():
            if language.missing_module:
                found.update(m.split(".")[0] for m in re.findall(language.missing_module, text))
    return found


def missing_names(report: TestReport) -> set[tuple[str, str]]:
    """(module, name) for each name the report's failures say a module lacks (an attribute or an import)."""
    found: set[tuple[str, str]] = set()
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        for pattern in (_NO_ATTRIBUTE, _NO_IMPORT):
            found.update((m["module"], m["name"]) for m in pattern.finditer(text))
    return found
