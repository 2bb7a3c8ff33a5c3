"""Generated tests checked for sense: what cannot pass whatever the code does is found, and asked again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent.generate import GenerateRequest, generate
from greenloop.agent.generate.examples import StatedExamples, check_examples
from greenloop.agent.generate.sense import senseless_tests, without_tests
from tests.agent.conftest import collect
from tests.agent.generate.conftest import file_oracle, tree
from tests.agent.generate.test_acceptance import ROMAN, ROMAN_EXAMPLES, ROMAN_PROMPT, ROMAN_TEST, script_roman

CODE = {"roman.py": ROMAN}
INTERFACES = "## roman.py\n- `to_roman(n: int) -> str`\n- `from_roman(s: str) -> int`"
EXAMPLES = check_examples(StatedExamples.model_validate(ROMAN_EXAMPLES), ROMAN_PROMPT).examples
RAISES_OBJECT = (
    "import pytest\nfrom roman import from_roman\n\n\n"
    "@pytest.mark.parametrize('s, expected', [('XLII', 42), ('IIII', pytest.raises(ValueError))])\n"
    "def test_from_roman(s, expected):\n    assert from_roman(s) == expected\n\n\n"
    "def test_ok():\n    assert from_roman('X') == 10\n"
)


def found(text: str, examples: Any = ()) -> list[str]:
    return [f"{f.test}: {f.why}" for f in senseless_tests(text, CODE, INTERFACES, examples)]


@pytest.mark.parametrize(("text", "expected"), [
    (RAISES_OBJECT, "test_from_roman: uses `pytest.raises(ValueError)` as a value"),
    ("import pytest\nfrom roman import from_roman\n\ndef test_a():\n    assert from_roman('IIII') == pytest.raises(ValueError)\n",
     "test_a: uses `pytest.raises(ValueError)` as a value"),
    ("def test_a():\n    assert 'IV' == 'IIII'\n", "test_a: asserts `'IV' == 'IIII'`, which holds constants only"),
    ("from roman import to_roman, parse_numeral\n\ndef test_a():\n    assert to_roman(1) == 'I'\n",
     ": imports `parse_numeral` from `roman`, which the plan's interfaces do not have"),
])
def test_a_test_that_cannot_pass_is_found(text: str, expected: str) -> None:
    assert any(f.startswith(expected) for f in found(text)), found(text)


def test_a_test_contradicting_a_stated_example_is_found_in_its_parametrized_case() -> None:
    text = ("import pytest\nfrom roman import to_roman, from_roman\n\n\n"
            "@pytest.mark.parametrize('n, want', [(1, 'I'), (4, 'IIII')])\n"
            "def test_to_roman(n, want):\n    assert to_roman(n) == want\n\n\n"
            "def test_zero():\n    assert to_roman(0) == ''\n\n\n"
            "def test_xlii():\n    with pytest.raises(ValueError):\n        from_roman('XLII')\n\n\n"
            "def test_empty():\n    with pytest.raises(KeyError):\n        from_roman('')\n")
    assert found(text, EXAMPLES) == [
        "test_to_roman: expects `to_roman(4)` to give `'IIII'`, but the request says `to_roman(4)` gives `'IV'`",
        "test_zero: expects `to_roman(0)` to give `''`, but the request says `to_roman(0)` raises `ValueError`",
        "test_xlii: expects `from_roman('XLII')` to raise, but the request says `from_roman('XLII')` gives `42`",
        "test_empty: expects `from_roman('')` to raise `KeyError`, but the request says `from_roman('')` raises "
        "`ValueError`",
    ]
    assert found(text) == []  # without the examples nothing says they are wrong


def test_sound_tests_pass_the_check() -> None:
    text = ("import pytest\nfrom roman import to_roman, from_roman\n\n\n"
            "@pytest.mark.parametrize('n, want', [(4, 'IV'), (9, 'IX')])\n"
            "def test_to_roman(n, want):\n    assert to_roman(n) == want\n\n\n"
            "def test_bad():\n    with pytest.raises(ValueError):\n        from_roman('IIII')\n"
            "    try:\n        from_roman('')\n        assert False\n    except ValueError:\n        pass\n")
    assert found(text, EXAMPLES) == []


def test_the_senseless_tests_can_be_left_out_when_others_remain() -> None:
    kept = without_tests(RAISES_OBJECT, senseless_tests(RAISES_OBJECT, CODE, INTERFACES, ()))
    assert "def test_from_roman" not in kept and "@pytest.mark.parametrize" not in kept
    assert "def test_ok():\n    assert from_roman('X') == 10\n" in kept


@pytest.fixture
def settings_for(plan_strategy: Any, tmp_path: Path) -> Any:
    return lambda **sections: plan_strategy(tmp_path, backend="local", **sections)


async def test_a_generated_test_comparing_to_pytest_raises_is_rejected_and_asked_again(
    tmp_path: Path, scripted_llm: Any, settings_for: Any
) -> None:
    script_roman(scripted_llm, {"roman.py": ROMAN, "tests/test_roman.py": ROMAN_TEST})
    bad = f"```python\n{RAISES_OBJECT}```\n"
    scripted_llm.rules = [r for r in scripted_llm.rules if r.step != "generate_file"]
    scripted_llm.script(file_oracle({"roman.py": ROMAN, "tests/test_roman.py": ROMAN_TEST},
                                    first={"tests/test_roman.py": [bad]}), step="generate_file")
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest(ROMAN_PROMPT, out), settings_for()))
    assert done.outcome == "green", done.summary + done.evidence
    asked = [json.dumps(r.messages) for r in scripted_llm.requests_for("generate_file")
             if "Write the file `tests/test_roman.py`" in json.dumps(r.messages)]
    assert len(asked) == 2
    assert "cannot pass whatever the code does" not in asked[0]
    assert "`test_from_roman` uses `pytest.raises(ValueError)` as a value" in asked[1]
    assert tree(out)["tests/test_roman.py"] == ROMAN_TEST
