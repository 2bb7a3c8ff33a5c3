"""The gates before a green is offered (repair/gates.py): broken tests, flaky tests, slowdowns, a suite too slow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested, Message
from greenloop.agent.repair.gates import Changed, changed_definitions, slowdown
from greenloop_sandbox.report import TestCase
from tests.agent.conftest import collect, write_project

GREET = 'def greet(name, punct="."):\n    return "Hello, " + name + punct\n'
GREET_TESTS = {
    "test_greet.py": 'from greet import greet\n\n\ndef test_default_is_an_exclamation():\n'
                     '    assert greet("Ann") == "Hello, Ann!"\n',
    "test_other.py": 'from greet import greet\n\n\ndef test_question():\n    assert greet("Bo", "?") == "Hello, Bo?"\n',
}
WRONG = '```python\ndef greet(name, punct="."):\n    return "Hello, " + name + "!"\n```\n'
RIGHT = '```python\ndef greet(name, punct="!"):\n    return "Hello, " + name + punct\n```\n'
NAMED = ["test_greet.py::test_default_is_an_exclamation"]


@pytest.mark.docker
async def test_a_green_that_breaks_a_test_outside_the_failing_set_is_not_offered_and_the_loop_goes_on(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "p", {"greet.py": GREET, **GREET_TESTS})
    scripted_llm.script(WRONG, RIGHT)  # the first reply passes the named test and breaks test_other's
    settings = make_settings(ws, loop={"candidates": 1}, retrieval={"coverage": False})
    events, done = await collect(fix(FixRequest(ws, test_ids=NAMED), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert done.changes.files[0].after == RIGHT.split("```python\n")[1].split("```")[0]
    said = [e.text for e in events if isinstance(e, Message)]
    assert any("breaks test_other.py::test_question, which passed before: it is not green" in t for t in said), said
    greens = [e.diff for e in events if isinstance(e, CandidateTested) and e.green]
    assert len(greens) == 2 and '+    return "Hello, " + name + "!"' in greens[0]  # green on the named test, refused
    asked = scripted_llm.requests_for("repair_function")
    assert len(asked) == 2 and "test_question" in "\n".join(m["content"] for m in asked[1].messages)  # told


@pytest.mark.docker
async def test_a_flaky_test_outside_the_failing_set_is_reported_and_does_not_block(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the test fails on its first run only (a counter in the sandbox's temp dir): the gate's first whole run
    flaky = ("import os\nimport tempfile\n\n\ndef test_sometimes():\n"
             "    mark = os.path.join(tempfile.gettempdir(), 'greenloop-flaky-mark')\n"
             "    first = not os.path.exists(mark)\n    open(mark, 'w').close()\n    assert not first\n")
    ws = write_project(tmp_path / "p", {"greet.py": GREET, **GREET_TESTS, "test_flaky.py": flaky})
    scripted_llm.script(RIGHT)
    settings = make_settings(ws, loop={"candidates": 1}, retrieval={"coverage": False})
    events, done = await collect(fix(FixRequest(ws, test_ids=NAMED), settings))
    assert done.outcome == "green" and done.offers_changes, done.summary + done.evidence
    assert (done.changes.risk, done.changes.kind) == ("", "model")
    said = [e.text for e in events if isinstance(e, Message)]
    assert any(t.startswith("Flaky: test_flaky.py::test_sometimes failed with the change and passed when run again")
               for t in said), said
    assert len(scripted_llm.requests_for("repair_function")) == 1


@pytest.mark.docker
async def test_a_whole_suite_slower_than_the_setting_ends_that_run_with_a_line_and_the_covering_tests_still_run(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(0.9)\n"
    ws = write_project(tmp_path / "p", {"greet.py": GREET, **GREET_TESTS, "test_slow.py": slow})
    scripted_llm.script(WRONG, RIGHT)
    settings = make_settings(ws, loop={"candidates": 1, "full_suite_seconds": 0.5}, retrieval={"coverage": False})
    events, done = await collect(fix(FixRequest(ws, test_ids=NAMED), settings))
    said = [e.text for e in events if isinstance(e, Message)]
    assert any(t.startswith("The whole suite did not end in 0.5 s") for t in said), said
    # test_other names `greet`: it covers the change, and still runs; the wrong green breaks it
    assert any("breaks test_other.py::test_question" in t for t in said), said
    assert done.outcome == "green" and done.changes.files[0].after == RIGHT.split("```python\n")[1].split("```")[0]
    assert sum(t.startswith("The whole suite did not end") for t in said) == 1  # not tried again


@pytest.mark.docker
async def test_a_test_outside_that_hangs_with_and_without_the_change_ends_at_its_limit_and_does_not_block(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    hangs = "import time\n\n\ndef test_forever():\n    while True:\n        time.sleep(0.05)\n"
    ws = write_project(tmp_path / "p", {"greet.py": GREET, **GREET_TESTS, "test_hangs.py": hangs})
    scripted_llm.script(RIGHT)
    settings = make_settings(ws, loop={"candidates": 1}, retrieval={"coverage": False})
    events, done = await collect(fix(FixRequest(ws, test_ids=NAMED), settings))
    assert done.outcome == "green" and done.changes.risk == "", done.summary + done.evidence + str(done.changes)
    said = [e.text for e in events if isinstance(e, Message)]
    assert not any("breaks" in t or t.startswith("Flaky") for t in said), said  # it hung before the change too
    assert any(t.startswith("The gates ran ") for t in said), said
    assert done.seconds < 100  # each run of it ended at its own limit


FACTORS = ("def get_factors(n):\n    small = [i for i in range(1, int(n ** 0.5) + 1) if n % i == 0]\n"
           "    return sorted(small + [n // i for i in small])\n")
FACTOR_TESTS = ("from factors import get_factors\n\n\ndef test_square():\n"
                "    assert get_factors(16) == [1, 2, 4, 8, 16]\n\n\ndef test_many():\n"
                "    assert len(get_factors(5_000_000)) == 56\n")
SLOW = "```python\ndef get_factors(n):\n    return [i for i in range(1, n + 1) if n % i == 0]\n```\n"


@pytest.mark.docker
async def test_a_rewrite_whose_covering_tests_take_far_longer_is_plausible_with_the_slowdown_as_its_reason(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "p", {"factors.py": FACTORS, "test_factors.py": FACTOR_TESTS})
    scripted_llm.script(SLOW)  # the same answers, looping to n instead of its square root (~0.25 s more on 5e6)
    # every test gets the 15 s cap: the adaptive limit (20x its 1 ms, at least 1 s) would end the slow loop on
    # a loaded machine, and this test is about the time, not the limit
    settings = make_settings(ws, loop={"candidates": 1}, retrieval={"coverage": True},
                             sandbox={"case_timeout_factor": 0})
    _, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert done.changes.risk == "plausible", done.changes
    reason = done.changes.risk_reason
    assert reason.startswith("the tests that call `get_factors` take ") and reason.endswith(" longer"), reason
    amount = reason.split(" take ")[1].removesuffix(" longer")  # "129x", or "0.14 s" when the fast run timed 0 s
    assert int(amount[:-1]) >= 3 if amount.endswith("x") else float(amount.removesuffix(" s")) >= 0.05, reason
    assert "take" in done.changes.label


def test_a_slowdown_needs_three_times_and_fifty_milliseconds_over_the_tests_passing_on_both_sides() -> None:
    changed = Changed(("mod.f",), {})

    def cases(**times: float) -> dict[str, TestCase]:
        return {t: TestCase(test_id=t, outcome="passed" if s >= 0 else "failed", duration=abs(s))
                for t, s in times.items()}

    before = cases(a=0.001, b=0.002, c=-0.001)
    assert slowdown(changed, ["a", "b", "c"], before, cases(a=0.2, b=0.2, c=5.0)) == \
        "the tests that call `f` take 133x longer"
    assert slowdown(changed, ["a", "b"], before, cases(a=0.02, b=0.02)) == ""  # 13x, but 37 ms
    assert slowdown(changed, ["a"], cases(a=1.0), cases(a=2.5)) == ""  # 1.5 s more, 2.5x
    assert slowdown(changed, ["c"], before, cases(c=5.0)) == ""  # failing before: nothing to compare


def test_the_changed_definitions_are_the_functions_whose_trees_differ_with_their_lines_before() -> None:
    before = "def a():\n    return 1\n\n\nclass K:\n    def b(self):\n        return 2\n"
    after = before.replace("return 2", "return 3")
    found = changed_definitions({"m.py": before, "x.js": "a\nb\n"}, {"m.py": after, "x.js": "a\nc\n"})
    assert found.names == ("K.b", "x.js")
    assert found.lines == {"m.py": frozenset({6, 7}), "x.js": frozenset({1, 2, 3})}
