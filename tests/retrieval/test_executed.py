"""The `executed` signal on a real index: Ochiai per line, to the innermost definition; the run's cache."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from greenloop.retrieval import RepoIndex, SpectrumCache, locate
from greenloop.retrieval.executed import line_scores, ochiai
from greenloop.retrieval.spectra import AFTER_MOVES
from greenloop_sandbox import Spectrum, TestFailure, TestLines
from greenloop_sandbox.spectrum import parse_spectrum
from tests.support import shop

CODE = b"""def outer(x):
    def inner(y):
        return y * 2
    return x + 1


def shared(x):
    return x
"""
TEST = b"from mod import outer\n\n\ndef test_outer():\n    assert outer(1) == 3\n"


def _spectrum(failing: dict[str, list[int]], *passing: dict[str, list[int]]) -> Spectrum:
    tests = [TestLines(test_id="test_mod.py::test_outer", outcome="failed", focus=True, lines=failing)]
    tests += [TestLines(test_id=f"test_mod.py::test_{i}", outcome="passed", lines=p) for i, p in enumerate(passing)]
    return Spectrum(tests=tests)


@pytest.fixture
async def index() -> RepoIndex:
    idx = RepoIndex()
    await idx.update({"mod.py": CODE, "test_mod.py": TEST})
    return idx


async def test_a_def_line_is_its_parents_and_test_code_is_never_a_suspect(index: RepoIndex) -> None:
    # the failing test ran outer's body and inner's `def` line (that runs whenever outer does), not inner's body
    spectrum = _spectrum({"mod.py": [2, 4, 8], "test_mod.py": [5]}, {"mod.py": [8]}, {"mod.py": [8]})
    found = {s.definition.symbol: s for s in ochiai(index, spectrum)}
    assert set(found) == {"outer", "shared"}  # not outer.inner, not test_outer
    assert found["outer"].value == 1.0 and (found["outer"].failed, found["outer"].passed) == (1, 0)
    assert found["shared"].value == pytest.approx(1 / 3**0.5)  # 1 / sqrt(1 x (1 + 2))


async def test_locate_says_why_in_the_signals(index: RepoIndex) -> None:
    spectrum = _spectrum({"mod.py": [3, 4, 8]}, {"mod.py": [8]})
    failure = TestFailure(test_id="test_mod.py::test_outer", file="test_mod.py", line=5, message="assert 2 == 3")
    found = await locate(index, [failure], top_k=5, spectrum=spectrum)
    inner = next(loc for loc in found if loc.symbol == "outer.inner").to_json()
    executed = next(s for s in inner["signals"] if s["name"] == "executed")  # type: ignore[union-attr]
    assert executed["value"] == 1.0 and executed["contribution"] > 0
    assert executed["note"] == "line 3 ran in 1 of 1 failing and 0 of 1 passing tests (Ochiai 1.00)"
    assert all(loc.role == "target" and not loc.path.startswith("test_") for loc in found)


async def test_no_failing_test_in_the_spectrum_changes_nothing(index: RepoIndex) -> None:
    failure = TestFailure(test_id="test_mod.py::test_outer", file="test_mod.py", line=5, message="assert 2 == 3")
    empty = Spectrum(note="coverage.py is not installed")
    assert await locate(index, [failure], spectrum=empty) == await locate(index, [failure])


async def test_the_run_asks_once_and_again_when_the_code_moves() -> None:
    calls: list[list[str]] = []

    async def run(ids: list[str]) -> Spectrum:
        calls.append(ids)
        return _spectrum({"mod.py": [3, 4]})

    cache = SpectrumCache(run)
    index = RepoIndex()
    await index.update({"mod.py": CODE, "test_mod.py": TEST})
    failure = [TestFailure(test_id="test_mod.py::test_outer")]
    first = await cache.get(index, failure)
    assert first is not None and await cache.get(index, failure) is first and len(calls) == 1
    for moves in range(1, AFTER_MOVES + 1):  # every line number moved: its lines name other code, measured again
        await index.update({"mod.py": b"\n" * moves + CODE, "test_mod.py": TEST})
        again = await cache.get(index, failure)
        assert again is not None and again is not first and len(calls) == 1 + moves
        assert cache.current(index) is again
    await index.update({"mod.py": b"\n" * 9 + CODE, "test_mod.py": TEST})
    assert await cache.get(index, failure) is None and len(calls) == 1 + AFTER_MOVES  # bounded: then without it
    assert await SpectrumCache(None).get(index, failure) is None  # retrieval.coverage off: never asked


async def test_a_pass_in_which_no_test_loaded_is_asked_again_once_the_failures_change() -> None:
    # PySnooper: the first run stops on a missing module; after the install the same test runs
    results = [Spectrum(note="pytest ran no test (exit 2)"), _spectrum({"mod.py": [3, 4]}), _spectrum({})]
    calls: list[list[str]] = []

    async def run(ids: list[str]) -> Spectrum:
        calls.append(ids)
        return results[len(calls) - 1]

    cache = SpectrumCache(run)
    index = RepoIndex()
    await index.update({"mod.py": CODE, "test_mod.py": TEST})
    missing = [TestFailure(test_id="test_mod.py", kind="error", message="No module named 'six'")]
    assert await cache.get(index, missing) is None
    assert await cache.get(index, missing) is None and len(calls) == 1  # the same failures: not again
    loaded = [TestFailure(test_id="test_mod.py::test_outer", message="assert 2 == 3")]
    assert await cache.get(index, loaded) is results[1] and calls[-1] == ["test_mod.py::test_outer"]
    assert await cache.get(index, [TestFailure(test_id="test_mod.py::test_outer", message="assert 4 == 3")]) \
        is results[1] and len(calls) == 2  # a pass that measured a failing test is kept


async def test_a_second_empty_pass_is_not_followed_by_a_third() -> None:
    calls: list[list[str]] = []

    async def run(ids: list[str]) -> Spectrum:
        calls.append(ids)
        return Spectrum(note="pytest ran no test (exit 2)")

    cache, index = SpectrumCache(run), RepoIndex()
    for name in ("a", "b", "c"):
        assert await cache.get(index, [TestFailure(test_id=f"test_{name}.py", kind="error", message=name)]) is None
    assert calls == [["test_a.py"], ["test_b.py"]]


def test_the_runner_line_is_read_and_broken_output_is_a_note() -> None:
    payload = {"tests": [{"id": shop.FAILING, "outcome": "failed", "focus": True, "lines": {"shop/cart.py": "1-3,7"}}],
               "seconds": 1.5, "note": ""}
    line = "SPECTRUM " + base64.b64encode(zlib.compress(json.dumps(payload).encode())).decode()
    spectrum = parse_spectrum(f"pytest noise\n{line}\n")
    assert [t.lines for t in spectrum.failing] == [{"shop/cart.py": [1, 2, 3, 7]}]
    assert parse_spectrum("noise\n").note == "no spectrum in the output"
    assert "unreadable" in parse_spectrum("SPECTRUM not-base64!\n").note


TRACED = b"""def record(x):
    return x * 2


def wrapper(x):
    return record(x) + 1


def helper(x):
    return x
"""
TRACED_TEST = b"from mod import wrapper\n\n\ndef test_wrapper():\n    assert wrapper(1) == 4\n"
TRACEBACK = """test_mod.py:5: in test_wrapper
    assert wrapper(1) == 4
mod.py:6: in wrapper
    return record(x) + 1
mod.py:2: in record
    return x * 2
E   ValueError: boom
"""


async def test_a_traceback_frame_coverage_did_not_record_counts_as_run_by_its_failing_test() -> None:
    # another tracer held sys.settrace while `record` ran: coverage saw `wrapper` and `helper`, not it
    idx = RepoIndex()
    await idx.update({"mod.py": TRACED, "test_mod.py": TRACED_TEST})
    tests = [TestLines(test_id="test_mod.py::test_wrapper", outcome="failed", focus=True,
                       lines={"mod.py": [6, 10]})]
    failure = TestFailure(test_id="test_mod.py::test_wrapper", file="test_mod.py", line=5, message="ValueError: boom",
                          traceback=TRACEBACK)
    found = await locate(idx, [failure], top_k=5, spectrum=Spectrum(tests=tests))
    record = next(loc for loc in found if loc.symbol == "record").to_json()
    executed = next(s for s in record["signals"] if s["name"] == "executed")  # type: ignore[union-attr]
    assert executed["value"] == 1.0
    assert "coverage did not record it" in str(executed["note"])
    symbols = [loc.symbol for loc in found]
    assert symbols.index("record") < symbols.index("helper")  # with only its static share it would trail helper


async def test_a_test_that_stopped_on_a_missing_name_ranks_without_its_coverage(index: RepoIndex) -> None:
    # the test failed on `mod.Missing` before calling anything: what it ran (its set-up, `shared`) is no evidence
    output = """_____ test_outer _____
    def test_outer():
>       with pytest.raises(mod.MissingError):
E       AttributeError: module 'mod' has no attribute 'MissingError'

test_mod.py:5: AttributeError
FAILED test_mod.py::test_outer - AttributeError: module 'mod' has no attribute 'MissingError'
"""
    spectrum = _spectrum({"mod.py": [8]}, {"mod.py": [3, 4]})
    with_coverage = await locate(index, output, top_k=5, spectrum=spectrum)
    assert with_coverage == await locate(index, output, top_k=5)
    assert not any(s.name == "executed" for loc in with_coverage for s in loc.signals)
    # the same spectrum with a failure inside the code is used
    ran = await locate(index, "mod.py:8: in shared\n    return x\nE   ValueError\n", top_k=5, spectrum=spectrum)
    assert any(s.name == "executed" for loc in ran for s in loc.signals)


async def test_code_only_coverage_found_gets_its_module_evidence_too() -> None:
    # `deep` is neither named, framed nor called by the test, and BM25 prefers the many `entry_*` helpers:
    # only the coverage pass finds it. It is in the module under test (mod.py for test_mod.py), which
    # counts for it as for everything else found there.
    fillers = "".join(f"def entry_variant_{n}(entry):\n    return entry\n\n\n" for n in range(50))
    code = fillers + "def entry(x):\n    return middle(x)\n\n\ndef middle(x):\n    return deep(x)\n\n\ndef deep(y):\n    return y\n"
    idx = RepoIndex()
    await idx.update({"mod.py": code.encode(),
                      "test_mod.py": b"from mod import entry\n\n\ndef test_entry():\n    assert entry(1) == 2\n"})
    deep_line = code.splitlines().index("def deep(y):") + 2
    tests = [TestLines(test_id="test_mod.py::test_entry", outcome="failed", focus=True, lines={"mod.py": [deep_line]})]
    failure = TestFailure(test_id="test_mod.py::test_entry", file="test_mod.py", line=5, message="assert 1 == 2")
    found = await locate(idx, [failure], top_k=60, spectrum=Spectrum(tests=tests))
    deep = next(loc for loc in found if loc.symbol == "deep")
    assert {s.name for s in deep.signals} >= {"executed", "module"}


def test_line_scores_are_ochiai_per_line_of_one_file() -> None:
    spectrum = _spectrum({"mod.py": [1, 2, 3], "other.py": [1]}, {"mod.py": [1, 2]}, {"mod.py": [1]})
    scores = line_scores(spectrum, "mod.py")
    assert scores[3] == 1.0 and scores[1] < scores[2] < scores[3]
    assert scores[1] == pytest.approx(1 / 3**0.5) and 4 not in scores
    assert line_scores(spectrum, "missing.py") == {}


async def test_a_pass_is_asked_again_when_a_file_it_has_no_lines_for_changed_and_the_failures_with_it() -> None:
    # cookiecutter-4: a class added to a module whose lines ran only at import; the test then runs on into the code
    calls: list[list[str]] = []

    async def run(ids: list[str]) -> Spectrum:
        calls.append(ids)
        return _spectrum({"mod.py": [3, 4]})

    cache, index = SpectrumCache(run), RepoIndex()
    await index.update({"mod.py": CODE, "errors.py": b"class Base(Exception):\n    pass\n", "test_mod.py": TEST})
    stopped = [TestFailure(test_id="test_mod.py::test_outer", message="AttributeError: module 'errors' has no attribute 'X'")]
    first = await cache.get(index, stopped)
    on = [TestFailure(test_id="test_mod.py::test_outer", message="assert 2 == 3")]
    assert await cache.get(index, on) is first and len(calls) == 1  # no file changed: the same pass
    await index.update({"errors.py": b"class Base(Exception):\n    pass\n\n\nclass X(Base):\n    pass\n"})
    assert await cache.get(index, stopped) is first and len(calls) == 1  # the same failures: nothing ran further
    again = await cache.get(index, on)
    assert again is not None and again is not first and len(calls) == 2
