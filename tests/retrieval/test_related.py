"""The defs the top one calls that a failing test ran (retrieval/related.py), on a real index."""

from __future__ import annotations

import pytest

from greenloop.retrieval import RepoIndex, executed_callees, path_from_tests
from greenloop.retrieval.model import Location
from greenloop_sandbox import Spectrum, TestLines

TOP = b"""from text.cut import trim
from text.case import shout, whisper


def headline(title, width):
    def tidy(s):
        return s.strip()
    if width:
        return shout(trim(tidy(title), width))
    return whisper(title)
"""
CUT = b"""def trim(text, width):
    return pad(text)[:width]


def pad(text):
    return text + " "
"""
CASE = b"""def shout(text):
    return text.upper()


def whisper(text):
    return text.lower()
"""


@pytest.fixture
async def index() -> RepoIndex:
    idx = RepoIndex()
    await idx.update({"report.py": TOP, "text/cut.py": CUT, "text/case.py": CASE, "tests/test_report.py": b""})
    return idx


def _top(index: RepoIndex) -> Location:
    d = next(d for d in index.definitions("report.py") if d.symbol == "headline")
    return Location(d.path, d.symbol, d.kind, d.start_line, d.end_line, 1.0, "top")


def _ran(failing: dict[str, list[int]], passing: dict[str, list[int]]) -> Spectrum:
    return Spectrum(tests=[TestLines(test_id="tests/test_report.py::test_a", outcome="failed", focus=True,
                                     lines=failing),
                           TestLines(test_id="tests/test_report.py::test_b", outcome="passed", lines=passing)])


async def test_the_callees_a_failing_test_ran_nearest_then_most_suspicious(index: RepoIndex) -> None:
    # the failing test ran headline, its nested tidy, trim, pad (two calls deep) and shout; whisper never ran;
    # a passing test ran shout too (less suspicious than trim)
    spectrum = _ran({"report.py": [7, 8, 9], "text/cut.py": [2, 6], "text/case.py": [2]}, {"text/case.py": [2]})
    found = executed_callees(index, _top(index), spectrum)
    assert [(loc.symbol, loc.role) for loc in found] == [("trim", "callee"), ("shout", "callee"), ("pad", "callee")]
    assert "headline calls it" in found[0].why and "reaches it in 2 calls" in found[2].why


async def test_no_spectrum_no_callees(index: RepoIndex) -> None:
    # without coverage nothing says which of its calls ran: the static callees alone are not offered
    assert executed_callees(index, _top(index), None) == []
    assert executed_callees(index, _top(index), Spectrum(note="no coverage runner")) == []


RUN = b"def run(items, keep):\n    return [i for i in items if keep(i)]\n"
FILTERS = b"""from rules import matches


def make_filter(rule):
    def keep(item):
        return matches(rule, item)
    return keep
"""
RULES = b"def matches(rule, item):\n    return item.startswith(rule)\n"
RUN_TEST = b"""from report import run
from filters import make_filter


def test_run():
    assert run(["ab", "b"], make_filter("a")) == ["ab"]
"""


async def test_the_path_from_the_failing_tests_calls_reaches_a_def_called_through_a_function_value() -> None:
    index = RepoIndex()
    await index.update({"report.py": RUN, "filters.py": FILTERS, "rules.py": RULES, "tests/test_run.py": RUN_TEST})
    spectrum = Spectrum(tests=[TestLines(test_id="tests/test_run.py::test_run", outcome="failed", focus=True,
                                         lines={"report.py": [2], "filters.py": [5, 6, 7], "rules.py": [2],
                                                "tests/test_run.py": [6]})])
    run = next(d for d in index.definitions("report.py") if d.symbol == "run")
    top = Location(run.path, run.symbol, run.kind, run.start_line, run.end_line, 1.0, "top")
    assert executed_callees(index, top, spectrum) == []  # `keep` is a parameter: no static callee of run
    found = path_from_tests(index, ["tests/test_run.py::test_run"], spectrum)
    assert [(loc.symbol, loc.role) for loc in found] == [("run", "path"), ("make_filter", "path"), ("matches", "path")]
    assert "2 call(s) from the failing test" in found[2].why
    assert path_from_tests(index, ["tests/test_run.py::test_run"], None) == []
