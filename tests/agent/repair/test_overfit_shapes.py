"""The overfitting shapes (repair/overfit_shapes.py), each a label with its reason, whatever made the change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.repair.overfit_shapes import evidence_of
from greenloop.agent.repair.risk import risk
from tests.agent.conftest import collect, write_project

TIME_TESTS = ("from clock import seconds\n\n\ndef test_milliseconds():\n"
              "    assert seconds('00:00:01:100') == 1.1\n")
CLOCK = ("def seconds(text):\n    h, m, s = text.split(':')[:3]\n    return int(h) * 3600 + int(m) * 60 + int(s)\n")


def test_a_new_comparison_with_a_value_the_failing_test_holds_is_special_casing() -> None:
    facts = evidence_of([("test_clock.py::test_milliseconds", "")], {"test_clock.py": TIME_TESTS})
    cased = CLOCK.replace("    h, m", "    if text == '00:00:01:100':\n        return 1.1\n    h, m")
    assert "compares with `'00:00:01:100'`, a value the failing test holds, in `seconds` (special-casing)" in \
        risk("model", {"clock.py": CLOCK}, {"clock.py": cased}, facts)
    general = CLOCK.replace("    h, m", "    if text.count(':') == 3:\n        return 1.1\n    h, m")
    assert "special-casing" not in risk("model", {"clock.py": CLOCK}, {"clock.py": general}, facts)
    # a value the test does not hold, or a plain one (0, 1, '', None), is no special case
    other = CLOCK.replace("    h, m", "    if text == '':\n        return 0\n    h, m")
    assert risk("model", {"clock.py": CLOCK}, {"clock.py": other}, facts) == ""
    # an edited comparison adds none, though the test holds its value (`> 18` to `>= 18`, a small edit's)
    adult = "def is_adult(age):\n    return age > 18\n"
    eighteen = evidence_of([("t.py::test_a", "")], {"t.py": "def test_a():\n    assert is_adult(18)\n"})
    assert risk("comparison", {"a.py": adult}, {"a.py": adult.replace(">", ">=")}, eighteen) == ""


def test_a_deleted_branch_return_or_raise_is_labelled_and_a_changed_condition_is_not() -> None:
    source = ("def parse(value):\n    if value is None:\n        raise ValueError('no value')\n"
              "    if value.startswith('-'):\n        return -int(value[1:])\n    else:\n        return int(value)\n")
    no_raise = source.replace("    if value is None:\n        raise ValueError('no value')\n", "")
    assert risk("model", {"p.py": source}, {"p.py": no_raise}) == \
        "deletes a branch in `parse`; deletes a `raise` in `parse`"
    no_else = source.replace("    else:\n        return int(value)\n", "    return int(value)\n")
    assert risk("model", {"p.py": source}, {"p.py": no_else}) == "deletes a branch in `parse`"
    no_return = source.replace("        return -int(value[1:])\n", "        value = value[1:]\n")
    assert risk("model", {"p.py": source}, {"p.py": no_return}) == "deletes a `return` in `parse`"
    condition = source.replace("startswith('-')", "startswith('+')")
    assert risk("comparison", {"p.py": source}, {"p.py": condition}) == ""


def test_a_regex_that_drops_an_anchor_or_widens_a_class_is_labelled() -> None:
    source = "import re\n\n\ndef mkdir_target(command):\n    return re.findall(r'^mkdir (.*)', command)\n"
    assert risk("regex", {"m.py": source}, {"m.py": source.replace("r'^mkdir", "r'mkdir")}) == \
        "drops the anchor `^` from the pattern `^mkdir (.*)` in `mkdir_target`"
    assert risk("model", {"m.py": source}, {"m.py": source.replace("r'^mkdir", r"r'\bmkdir")}) == ""  # the fix
    word = "import re\n\n\ndef words(text):\n    return re.findall(r'\\b[a-z]+\\b', text)\n"
    assert risk("regex", {"w.py": word}, {"w.py": word.replace("[a-z]", "[a-z0-9]")}) == \
        "widens a character class of the pattern `\\b[a-z]+\\b` in `words`"
    assert risk("regex", {"w.py": word}, {"w.py": word.replace("[a-z]", ".")}).startswith("widens a character class")
    assert risk("regex", {"w.py": word}, {"w.py": word.replace("[a-z]", "[a-y]")}) == ""  # narrowed
    assert risk("regex", {"w.py": word}, {"w.py": word.replace("[a-z]+", "[a-z]*")}) == ""  # a quantifier
    compiled = "import re\n\nCOMMAND = re.compile(r'^mkdir (.*)$')\n"
    assert risk("regex", {"c.py": compiled}, {"c.py": compiled.replace(")$'", ")'")}) == \
        "drops the anchor `$` from the pattern `^mkdir (.*)$` at module level"


def test_a_whole_function_written_again_for_a_failure_at_one_line_is_labelled() -> None:
    source = ("def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    count = len(xs)\n"
              "    return total / count\n")
    rewritten = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
    trace = ('Traceback (most recent call last):\n  File "/workspace/stats.py", line 6, in mean\n'
             "    return total / count\nZeroDivisionError: division by zero\n")
    facts = evidence_of([("test_stats.py::test_empty", trace)], {"stats.py": source, "test_stats.py": ""})
    assert facts.lines == {"stats.py": frozenset({6})}
    assert risk("model", {"stats.py": source}, {"stats.py": rewritten}, facts) == \
        "rewrites 5 of its 6 lines of `mean` for a failure that points at one line"
    guarded = source.replace("    return total / count\n", "    return total / count if count else 0.0\n")
    assert risk("model", {"stats.py": source}, {"stats.py": guarded}, facts) == ""
    assert risk("model", {"stats.py": source}, {"stats.py": rewritten}) == ""  # no failure that points anywhere


@pytest.mark.docker
async def test_a_model_reply_that_special_cases_the_failing_tests_value_is_offered_only_as_plausible(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "p", {"clock.py": CLOCK, "test_clock.py": TIME_TESTS})
    cased = CLOCK.replace("    h, m", "    if text == '00:00:01:100':\n        return 1.1\n    h, m")
    scripted_llm.script(f"```python\n{cased}```\n", step="repair_function")
    _, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"candidates": 1})))
    assert done.outcome == "green", done.summary + done.evidence
    assert (done.changes.kind, done.changes.risk) == ("model", "plausible")
    assert "a value the failing test holds, in `seconds` (special-casing)" in done.changes.risk_reason
