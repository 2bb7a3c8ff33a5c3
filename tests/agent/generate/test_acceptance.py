"""Acceptance tests from the request's examples: asked as data, checked against the request, rendered by greenloop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import events as ev
from greenloop.agent.generate import GenerateRequest, generate
from greenloop.agent.generate.acceptance import render_acceptance
from greenloop.agent.generate.examples import StatedExample, StatedExamples, check_examples, parse_line
from greenloop.errors import GreenloopError
from tests.agent.conftest import collect
from tests.agent.generate.conftest import file_oracle, plan_json, planned, tree

ROMAN_PROMPT = (
    "A Python module roman.py with to_roman(n: int) -> str and from_roman(s: str) -> int for 1..3999. "
    "For example to_roman(4) is 'IV', to_roman(1994) is 'MCMXCIV' and from_roman('XLII') is 42. "
    "from_roman raises ValueError for '' and for 'IIII'; to_roman(0) raises ValueError."
)
# the model's list: the prompt's examples, and one it made up (5 and 'V' are stated nowhere)
ROMAN_EXAMPLES = {
    "module": "roman",
    "examples": [
        {"call": "to_roman(4)", "returns": "'IV'", "raises": ""},
        {"call": "to_roman(1994)", "returns": "'MCMXCIV'", "raises": ""},
        {"call": "from_roman('XLII')", "returns": "42", "raises": ""},
        {"call": "from_roman('')", "returns": "", "raises": "ValueError"},
        {"call": "from_roman('IIII')", "returns": "", "raises": "ValueError"},
        {"call": "to_roman(0)", "returns": "", "raises": "ValueError"},
        {"call": "to_roman(5)", "returns": "'V'", "raises": ""},
    ],
}
ROMAN = '''_VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
           (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n: int) -> str:
    if not 1 <= n <= 3999:
        raise ValueError(f"out of range: {n}")
    out = ""
    for value, letters in _VALUES:
        while n >= value:
            out, n = out + letters, n - value
    return out


def from_roman(s: str) -> int:
    for n in range(1, 4000):
        if to_roman(n) == s:
            return n
    raise ValueError(f"not a roman numeral: {s!r}")
'''
ROMAN_TEST = "from roman import to_roman\n\n\ndef test_one():\n    assert to_roman(1) == 'I'\n"
ROMAN_PLAN = plan_json(planned("roman.py"), planned("tests/test_roman.py", depends_on=("roman.py",), test=True),
                       name="roman")


@pytest.fixture
def settings_for(plan_strategy: Any, tmp_path: Path) -> Any:
    return lambda **sections: plan_strategy(tmp_path, backend="local", **sections)


def script_roman(llm: Any, files: dict[str, str]) -> None:
    llm.script(ROMAN_EXAMPLES, step="generate_acceptance")
    llm.script("## roman.py\n- `to_roman(n: int) -> str`\n- `from_roman(s: str) -> int`", step="generate_interfaces")
    llm.script(ROMAN_PLAN, step="generate_plan")
    llm.script(file_oracle(files), step="generate_file")


def test_the_examples_the_request_states_are_kept_and_an_invented_one_is_dropped() -> None:
    found = check_examples(StatedExamples.model_validate(ROMAN_EXAMPLES), ROMAN_PROMPT)
    assert found.module == "roman"
    assert [e.line() for e in found.examples] == [
        "- `to_roman(4) == 'IV'`", "- `to_roman(1994) == 'MCMXCIV'`", "- `from_roman('XLII') == 42`",
        "- `from_roman('')` raises `ValueError`", "- `from_roman('IIII')` raises `ValueError`",
        "- `to_roman(0)` raises `ValueError`",
    ]
    assert found.dropped == ("`to_roman(5)` == `'V'`: the request does not state the argument `5`",)
    # the plan's lines read back as the same examples
    assert [parse_line(e.line()) for e in found.examples] == list(found.examples)


@pytest.mark.parametrize(("example", "why"), [
    (StatedExample(call="to_roman(4)", returns="'VI'"), "the request does not state the result `'VI'`"),
    (StatedExample(call="to_romans(4)", returns="'IV'"), "the request does not name `to_romans`"),
    (StatedExample(call="to_roman(n)", returns="'IV'"), "it is not a call on literal values"),
    (StatedExample(call="to_roman(0)", raises="KeyError"), "the request does not name `KeyError`"),
    (StatedExample(call="to_roman(4)", returns="'IV'", raises="ValueError"),
     "it gives no single result (a value, an exception or a file)"),
    (StatedExample(call="import os", returns="1"), "it is not a Python call"),
])
def test_an_example_the_request_does_not_state_is_dropped_saying_why(example: StatedExample, why: str) -> None:
    found = check_examples(StatedExamples(examples=[example]), ROMAN_PROMPT)
    assert found.examples == ()
    assert found.dropped[0].endswith(why)


def test_a_value_the_request_states_after_a_call_but_not_as_its_result_is_dropped() -> None:
    # the 1.5B model read "after Account('bob').deposit(5) the balance is 5" as deposit returning 5: the
    # acceptance test then failed on right code (deposit returns None) through three rounds (2026-12-07)
    prompt = ("A class Account(owner: str, balance: float = 0) with deposit(amount). After Account('bob').deposit(5) "
              "the balance is 5, and Account(\"ann\", 10).withdraw(4) returns 6.")
    found = check_examples(StatedExamples(examples=[
        StatedExample(call="Account('bob').deposit(5)", returns="5"),
        StatedExample(call="Account('ann', 10).withdraw(4)", returns="6"),
    ]), prompt)
    assert [e.line() for e in found.examples] == ["- `Account('ann', 10).withdraw(4) == 6`"]
    assert found.dropped == ("`Account('bob').deposit(5)` == `5`: the request says `5` after "
                             "`Account('bob').deposit(5)`, not as what it gives",)


def test_containers_and_quotes_count_as_stated_as_written() -> None:
    prompt = 'top_words("b a b", 1) gives [("b", 2)] and count_words("a A") gives {"a": 2}'
    found = check_examples(StatedExamples(examples=[
        StatedExample(call="top_words('b a b', 1)", returns="[('b', 2)]"),
        StatedExample(call="count_words('a A')", returns="{'a': 2}"),
        StatedExample(call="count_words('a A')", returns="{'a': 1}"),
    ]), prompt)
    assert [e.returns for e in found.examples] == ["[('b', 2)]", "{'a': 2}"]
    # the call is written in the request, and what follows it is {"a": 2}
    assert found.dropped[0].endswith("the request does not state the result `{'a': 1}`")
    # stated in prose (the call written nowhere): a second result for the same call contradicts the first
    prose = 'count_words gives {"a": 2} for "a A", and 1 for "b"'
    found = check_examples(StatedExamples(examples=[
        StatedExample(call="count_words('a A')", returns="{'a': 2}"),
        StatedExample(call="count_words('a A')", returns="{'a': 1}"),
    ]), prose)
    assert [e.returns for e in found.examples] == ["{'a': 2}"]
    assert "contradicts the example" in found.dropped[0]


def test_the_rendered_file_is_parametrized_with_pytest_raises_for_errors_and_passes_on_right_code(
    tmp_path: Path
) -> None:
    found = check_examples(StatedExamples.model_validate(ROMAN_EXAMPLES), ROMAN_PROMPT)
    text = render_acceptance(found, {"roman.py": ROMAN})
    assert "from roman import from_roman, to_roman\n" in text
    assert "@pytest.mark.parametrize(" in text and "with pytest.raises(error):" in text
    assert "pytest.param(lambda: from_roman('IIII'), ValueError, id=\"from_roman('IIII')\")" in text
    assert "to_roman(5)" not in text
    compile(text, "test_acceptance.py", "exec")


async def test_the_roman_prompt_becomes_acceptance_tests_the_loop_keeps(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    script_roman(scripted_llm, {"roman.py": ROMAN, "tests/test_roman.py": ROMAN_TEST})
    out = tmp_path / "out"
    seen, done = await collect(generate(GenerateRequest(ROMAN_PROMPT, out), settings_for()))
    assert done.outcome == "green", done.summary + done.evidence
    assert done.summary.endswith("the tests pass on the first run, the 6 example(s) the request states among them.")
    on_disk = tree(out)
    acceptance = on_disk["tests/test_acceptance.py"]
    assert "def test_to_roman_gives_the_stated_value(call, expected):" in acceptance
    assert "def test_from_roman_raises_the_stated_error(call, error):" in acceptance
    assert "to_roman(5)" not in acceptance
    first = next(e for e in seen if isinstance(e, ev.TestsRan) and e.iteration == 0)
    assert first.passed == 1 + 6 and first.failed == 0  # the model's test and the six stated examples
    plan_md = on_disk[".greenloop/plan.md"]
    assert "## Acceptance" in plan_md and "- `from_roman('')` raises `ValueError`" in plan_md
    assert "Dropped: `to_roman(5)` == `'V'`: the request does not state the argument `5`" in plan_md
    # asked as data: the step's JSON schema, and the request in the question
    asked = scripted_llm.requests_for("generate_acceptance")
    assert len(asked) == 1 and asked[0].response_format is not None
    assert ROMAN_PROMPT in json.dumps(asked[0].messages, ensure_ascii=False).replace("\\'", "'")


async def test_an_edited_plan_s_examples_are_the_acceptance_tests_and_the_model_is_not_asked_for_them(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    script_roman(scripted_llm, {"roman.py": ROMAN, "tests/test_roman.py": ROMAN_TEST})
    out = tmp_path / "out"
    await collect(generate(GenerateRequest(ROMAN_PROMPT, out), settings_for()))
    plan_file = out / ".greenloop" / "plan.md"
    edited = plan_file.read_text().replace("- `to_roman(4) == 'IV'`", "- `to_roman(3) == 'III'`")
    plan_file.write_text(edited)
    before = len(scripted_llm.requests_for("generate_acceptance"))
    again = tmp_path / "again"
    _, done = await collect(generate(
        GenerateRequest("", again, from_plan=plan_file), settings_for()))
    assert done.outcome == "green", done.summary + done.evidence
    assert len(scripted_llm.requests_for("generate_acceptance")) == before
    acceptance = (again / "tests" / "test_acceptance.py").read_text()
    assert "lambda: to_roman(3), 'III'" in acceptance and "to_roman(4)" not in acceptance


async def test_a_prompt_without_examples_asks_for_none_and_writes_no_acceptance_file(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    script_roman(scripted_llm, {"roman.py": ROMAN, "tests/test_roman.py": ROMAN_TEST})
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a roman numeral converter", out), settings_for()))
    assert done.outcome == "green", done.summary + done.evidence
    assert scripted_llm.requests_for("generate_acceptance") == []
    assert "tests/test_acceptance.py" not in tree(out)


async def test_a_module_name_that_is_no_python_name_is_an_error_before_any_model_call(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    with pytest.raises(GreenloopError, match=r"`roman-numerals\.py`, which cannot be a Python name"):
        generate(GenerateRequest("A module roman-numerals.py with to_roman(4) == 'IV'", tmp_path / "o"), settings_for())
    with pytest.raises(GreenloopError, match="the function `to-roman`"):
        generate(GenerateRequest("A module roman.py whose to-roman(4) gives 'IV'", tmp_path / "o"), settings_for())
    assert scripted_llm.requests == []


def test_the_acceptance_file_stays_the_spec_where_the_other_tests_may_change() -> None:
    from greenloop.agent.changes.testfiles import TestFiles

    tests = TestFiles.of(["tests/**"], [], writable=True, spec=["tests/test_acceptance.py"])
    assert tests.refusal("tests/test_roman.py") is None and tests.editable("tests/test_roman.py")
    refused = tests.refusal("tests/test_acceptance.py")
    assert refused is not None and "acceptance tests" in refused
    assert not tests.editable("tests/test_acceptance.py")


def test_code_passing_the_acceptance_tests_is_not_traded_for_more_passing_generated_tests() -> None:
    from greenloop.agent.repair.candidate_round import better
    from greenloop_sandbox import TestReport
    from greenloop_sandbox.report import TestFailure

    def report(passed: int, failing: list[str]) -> TestReport:
        return TestReport(passed=passed, failed=len(failing), failures=[TestFailure(test_id=t) for t in failing])

    state = report(7, ["tests/test_roman.py::test_a", "tests/test_roman.py::test_b"])
    bent = report(8, ["tests/test_acceptance.py::test_to_roman_gives_the_stated_value[to_roman(4)]"])
    spec = frozenset({"tests/test_acceptance.py"})
    assert better(bent, state)  # by counts alone it would move
    assert not better(bent, state, spec=spec)
    assert better(state, bent, spec=spec)


# a test written with the code that is wrong (9 is 'IX'), on a call the request states no example of
WRONG_TEST = "from roman import to_roman\n\n\ndef test_nine():\n    assert to_roman(9) == 'VIIII'\n"
# the code bent to that test: it still passes every stated example (1994 needs no IX)
BENT = ROMAN.split("\n\n\ndef to_roman")[0].replace('(9, "IX"), ', "") + "\n\n\n" + "def to_roman" + \
    ROMAN.split("\n\n\ndef to_roman")[1].split("\n\n\ndef from_roman")[0] + "\n"


async def test_a_wrong_generated_test_against_right_code_the_loop_keeps_the_code_and_fixes_the_test(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    script_roman(scripted_llm, {"roman.py": ROMAN, "tests/test_roman.py": WRONG_TEST})
    # asked what to_roman(9) must give, the model decides nothing; asked for code, it bends it to the test
    scripted_llm.script("It depends on which numeral style is meant.", step="repair_verdict")
    scripted_llm.script(lambda body: f"```python\n{BENT}```\n")
    settings = make_settings(tmp_path, backend="local", loop={"candidates": 1, "small_edits": 0, "second_look": False},
                             retrieval={"coverage": False})
    out = tmp_path / "out"
    seen, done = await collect(generate(GenerateRequest(ROMAN_PROMPT, out), settings))
    assert done.outcome == "green", done.summary + done.evidence
    on_disk = tree(out)
    assert on_disk["roman.py"] == ROMAN  # the code the request's examples agree with stays
    assert on_disk["tests/test_roman.py"] == WRONG_TEST.replace("'VIIII'", "'IX'")
    assert scripted_llm.requests_for("repair_verdict")  # the model was asked first
    said = " ".join(e.text for e in seen if isinstance(e, ev.Message))
    assert "(undecided; the acceptance tests pass): the code's value" in said


async def test_code_failing_an_acceptance_test_is_fixed_against_it_and_the_file_stays_as_written(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    buggy = ROMAN.replace("range(1, 4000)", "range(1, 40)")  # from_roman('XLII') raises
    script_roman(scripted_llm, {"roman.py": buggy, "tests/test_roman.py": ROMAN_TEST})
    right = "def from_roman(s: str) -> int:" + ROMAN.split("def from_roman(s: str) -> int:")[1]
    scripted_llm.script(lambda body: f"```python\n{right}```\n")
    settings = make_settings(tmp_path, backend="local", loop={"candidates": 1, "small_edits": 0, "second_look": False},
                             retrieval={"coverage": False})
    out = tmp_path / "out"
    seen, done = await collect(generate(GenerateRequest(ROMAN_PROMPT, out), settings))
    assert done.outcome == "green", done.summary + done.evidence
    first = next(e for e in seen if isinstance(e, ev.TestsRan) and e.iteration == 0)
    assert first.failed == 1 and first.passed == 6  # from_roman('XLII') fails; the model's own test passes
    on_disk = tree(out)
    assert on_disk["roman.py"] == ROMAN
    assert "lambda: from_roman('XLII'), 42" in on_disk["tests/test_acceptance.py"]
    asked = [json.dumps(r.messages) for r in scripted_llm.requests if r.step and r.step.startswith("repair_")]
    assert asked and "## The acceptance tests (the request's own examples: they are right" in asked[0]


def test_where_the_acceptance_tests_pass_the_failing_generated_checks_are_asked_about_first(tmp_path: Path) -> None:
    from greenloop.agent.changes.testfiles import TestFiles
    from greenloop.agent.changes.working_copy import WorkingCopy
    from greenloop.agent.repair import ladder
    from greenloop.agent.repair.check_statements import Check
    from greenloop.retrieval import Location
    from greenloop_sandbox import TestReport
    from greenloop_sandbox.report import TestFailure

    (tmp_path / "roman.py").write_text(ROMAN)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_roman.py").write_text(WRONG_TEST)
    copy = WorkingCopy.from_workspace(tmp_path)
    top = Location("roman.py", "to_roman", "function", 5, 12, 1.0, "frames")
    check = Check("tests/test_roman.py", "tests/test_roman.py::test_nine", 5, 5, "    assert to_roman(9) == 'VIIII'",
                  "AssertionError: assert 'IX' == 'VIIII'")

    def order(failing: str, spec: tuple[str, ...]) -> list[str]:
        report = TestReport(passed=6, failed=1, failures=[TestFailure(test_id=failing)])
        tests = TestFiles.of([], [], writable=True, spec=spec)
        return [a.label for a in ladder.ladder([top], report, copy, tests, checks=[check])]

    spec = ("tests/test_acceptance.py",)
    generated_only = order("tests/test_roman.py::test_nine", spec)
    assert generated_only[0].startswith("checks")  # the acceptance tests pass: the failing check is the suspect
    assert not order("tests/test_roman.py::test_nine", ())[0].startswith("checks")  # no acceptance: as before
    assert not order("tests/test_acceptance.py::test_to_roman_gives_the_stated_value[to_roman(4)]", spec)[0] \
        .startswith("checks")  # the code fails the request's own example: the code first


TOTAL_PROMPT = ("A Python module report.py with save_total(values: list[int], path: str) that writes the sum of "
                "the values to the file at path: save_total([1, 2, 4], 'total.txt') writes '7' to total.txt.")
TOTAL = ("def save_total(values, path):\n    with open(path, 'w', encoding='utf-8') as f:\n"
         "        f.write(f'{sum(values)}\\n')\n")


async def test_a_file_the_request_says_a_call_writes_is_an_acceptance_test_too(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    scripted_llm.script({"module": "report", "examples": [
        {"call": "save_total([1, 2, 4], 'total.txt')", "writes": "total.txt", "content": "'7'"},
        {"call": "save_total([1], 'one.txt')", "writes": "one.txt", "content": "'1'"},  # not stated
    ]}, step="generate_acceptance")
    scripted_llm.script("## report.py\n- `save_total(values, path)`", step="generate_interfaces")
    scripted_llm.script(plan_json(planned("report.py"), planned("tests/test_report.py", depends_on=("report.py",),
                                                                 test=True), name="report"), step="generate_plan")
    own = "from report import save_total\n\n\ndef test_it(tmp_path):\n    save_total([], tmp_path / 'x')\n"
    scripted_llm.script(file_oracle({"report.py": TOTAL, "tests/test_report.py": own}), step="generate_file")
    out = tmp_path / "out"
    seen, done = await collect(generate(GenerateRequest(TOTAL_PROMPT, out), settings_for()))
    assert done.outcome == "green", done.summary + done.evidence
    first = next(e for e in seen if isinstance(e, ev.TestsRan) and e.iteration == 0)
    assert (first.passed, first.failed) == (2, 0)
    on_disk = tree(out)
    assert "pytest.param(lambda: save_total([1, 2, 4], 'total.txt'), 'total.txt', '7'" in \
        on_disk["tests/test_acceptance.py"]
    assert "- `save_total([1, 2, 4], 'total.txt')` writes `total.txt`: `'7'`" in on_disk[".greenloop/plan.md"]
    assert "Dropped: `save_total([1], 'one.txt')` writes `one.txt`: the request does not state the argument `[1]`" \
        in on_disk[".greenloop/plan.md"]
    assert parse_line("- `save_total([1, 2, 4], 'total.txt')` writes `total.txt`: `'7'`").writes == "total.txt"
