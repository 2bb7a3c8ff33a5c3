"""Better informed requests (issue 62, item 4): the failed comparison in words, the callees' doc lines and the lines the
failing test ran, each in the request when its data exists and its `prompt.*` setting is on, and never otherwise."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.orchestration.describe import describe
from greenloop.agent.prompting.material import PromptCodeBuilder
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form
from greenloop.agent.repair.file_form import FileForm, whole_file
from greenloop.agent.repair.prompts import repair_messages
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.rungs.region import REGION
from greenloop.agent.repair.rungs.several import SEVERAL
from greenloop.agent.repair.splice import Target
from greenloop.settings import load_settings
from greenloop_sandbox import Spectrum, TestFailure, TestLines, TestReport
from tests.agent.conftest import collect, write_project

ROOT = Path(__file__).resolve().parents[3]
HELPERS = ('def scale(x, factor):\r\n    """Multiply x by\tfactor,\r\n    rounding nothing.\r\n\r\n    More."""\r\n'
           "    return x * factor\r\n")
CALC = ("from helpers import scale\n\n\ndef shift(x):\n    return x + 1\n\n\n"
        "def total(items, factor=1):\n    out = 0\n    for item in items:\n        if item < 0:\n            continue\n"
        "        # scaled\n        out += scale(item, factor)\n    return shift(out)\n")
TEST = "from calc import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n"
ID = "test_calc.py::test_total"
FAILURE = TestFailure(test_id=ID, file="test_calc.py", line=5, message="assert 7 == 6\n +  where 7 = total([1, 2, 3])",
                      traceback=">       assert total([1, 2, 3]) == 6\nE       assert 7 == 6\ntest_calc.py:5: AssertionError")
TOTAL = Target("calc.py", "total", "function", 8, 15)
SHIFT = Target("calc.py", "shift", "function", 4, 5)
RAN = {"calc.py": [5, 9, 10, 11, 14, 15], "helpers.py": [6]}  # `continue` (line 12) never ran

SAID = "That is: `total([1, 2, 3])` returned `7`, and the test expects `6`."
DOC = "- def scale(x, factor):  (helpers.py:1)\n  Multiply x by factor, rounding nothing.\n"
LINES = ("The failing tests ran these lines of `total` (numbered as in the file, where it starts at line 8):\n"
         "- lines 9-11: `out = 0` ... `if item < 0:`\n- lines 14-15: `out += scale(item, factor)` ... `return shift(out)`\n")
SHIFT_LINES = "The failing tests ran these lines of `shift` (numbered as in the file, where it starts at line 4):\n- line 5:"


async def builder_for(copy: WorkingCopy, shows: RequestShows | None = None, *,
                      ran: dict[str, list[int]] | None = RAN) -> PromptCodeBuilder:
    """The run's prompt-code builder over `copy`, its coverage pass (the port) giving the failing test's `ran` lines."""
    async def coverage(ids: list[str]) -> Spectrum:
        if ran is None:
            return Spectrum(note="coverage.py is not installed")
        return Spectrum(tests=[TestLines(test_id=ID, outcome="failed", focus=True, lines=ran)])

    builder = PromptCodeBuilder(use_retrieval=True, budget_tokens=3000, top_k=8, coverage=coverage, shows=shows)
    await builder.build(copy, [FAILURE])
    return builder


def project(tmp_path: Path) -> WorkingCopy:
    return WorkingCopy(tmp_path, {"helpers.py": HELPERS.encode(), "calc.py": CALC.encode(), "test_calc.py": TEST.encode()})


def asked(approach: Approach, copy: WorkingCopy, builder: PromptCodeBuilder, tmp_path: Path,
          failure: TestFailure = FAILURE) -> str:
    [_, user] = repair_messages(approach, copy, builder.index, TestReport(failed=1, failures=[failure]), TestFiles(),
                                template="python", workspace=tmp_path, shows=builder.request_shows())
    return user["content"]


@pytest.mark.parametrize("form", [FUNCTION, REGION])
async def test_a_function_request_shows_all_three_where_their_data_exists(tmp_path: Path, form: Form) -> None:
    copy = project(tmp_path)
    text = asked(Approach(form, TOTAL, "top"), copy, await builder_for(copy), tmp_path)
    assert "test_calc.py:5: AssertionError\n```\n" + SAID in text  # under the failure it is about
    assert "It calls:\n" + DOC + "- def shift(x):  (calc.py:4)\n" in text  # CRLF and a tab tidied; no doc: no line
    assert LINES in text
    assert text.index("def total(items") < text.index(LINES) < text.index("It calls:")  # under the function's code


async def test_a_request_of_several_shows_the_lines_each_def_ran(tmp_path: Path) -> None:
    copy = project(tmp_path)
    text = asked(Approach(SEVERAL, TOTAL, "together", also=(SHIFT,)), copy, await builder_for(copy), tmp_path)
    assert SAID in text
    assert "    return shift(out)\n```\n" + LINES in text
    assert "    return x + 1\n```\n" + SHIFT_LINES + " `return x + 1`" in text


@pytest.mark.parametrize(("off", "gone"), [("expected_actual", SAID), ("callee_docs", DOC), ("executed_lines", LINES)])
async def test_each_item_is_left_out_when_its_setting_is_off(tmp_path: Path, off: str, gone: str) -> None:
    copy = project(tmp_path)
    settings = load_settings(tmp_path, {"prompt": {off: False}}).prompt
    shows = RequestShows(expected_actual=settings.expected_actual, callee_docs=settings.callee_docs,
                         executed_lines=settings.executed_lines)
    text = asked(Approach(FUNCTION, TOTAL, "top"), copy, await builder_for(copy, shows), tmp_path)
    assert gone not in text
    assert all(item in text for item in {SAID, DOC, LINES} - {gone})  # the other two stay
    if off == "callee_docs":
        assert "- def scale(x, factor):  (helpers.py:1)\n- def shift(x)" in text  # the signature alone


async def test_without_coverage_or_after_the_code_moved_no_line_is_marked(tmp_path: Path) -> None:
    copy = project(tmp_path)
    for builder in [await builder_for(copy, ran=None),  # the pass gave nothing (no coverage.py)
                    PromptCodeBuilder(use_retrieval=True, budget_tokens=3000, top_k=8),  # retrieval.coverage off
                    await builder_for(copy, ran={"helpers.py": [6]})]:  # it ran no line of `total`
        await builder.build(copy, [FAILURE])
        text = asked(Approach(FUNCTION, TOTAL, "top"), copy, builder, tmp_path)
        assert "The failing tests ran" not in text and SAID in text
    # the measured file changed since (a kept change moved its lines): its numbers would name other code
    builder = await builder_for(copy)
    copy.write("calc.py", CALC.replace("    out = 0\n", "    out = 0\n    seen = 0\n"))
    await builder.index.update(copy.files())
    assert "The failing tests ran" not in asked(Approach(FUNCTION, TOTAL, "top"), copy, builder, tmp_path)
    # the copy differs from what the index (and so the pass) read: nothing either
    copy = project(tmp_path)
    builder = await builder_for(copy)
    copy.write("calc.py", CALC.replace("    out = 0\n", "    out = 1\n"))
    assert "The failing tests ran" not in asked(Approach(FUNCTION, TOTAL, "top"), copy, builder, tmp_path)


async def test_a_failure_that_is_no_comparison_or_a_function_not_in_the_index_shows_nothing_more(tmp_path: Path) -> None:
    copy = project(tmp_path)
    builder = await builder_for(copy)
    raised = FAILURE.model_copy(update={"message": "ZeroDivisionError: division by zero",
                                        "traceback": "calc.py:11: ZeroDivisionError"})
    assert "That is:" not in asked(Approach(FUNCTION, TOTAL, "top"), copy, builder, tmp_path, raised)
    gone = Target("calc.py", "vanished", "function", 40, 44)  # past the file's end, in no index
    text = asked(Approach(FUNCTION, gone, "top"), copy, builder, tmp_path)
    assert "It calls:" not in text and "The failing tests ran" not in text


def test_each_ablation_config_turns_off_its_item_alone() -> None:
    folder = ROOT / "benchmarks" / "configs" / "ablation"
    assert load_settings(None, {}).prompt.model_dump() == {"expected_actual": True, "callee_docs": True,
                                                           "executed_lines": True}
    for item in ("expected_actual", "callee_docs", "executed_lines"):
        path = folder / f"no-{item.replace('_', '-')}.toml"
        assert path.read_text().startswith("# "), path  # its first line says what it removes
        prompt = load_settings(None, {}, config_file=path).prompt.model_dump()
        assert prompt == {name: name != item for name in prompt}, path
    together = folder / "no-informed-requests.toml"  # the first stage: all three away at once
    assert load_settings(None, {}, config_file=together).prompt.model_dump() == dict.fromkeys(prompt, False)


async def test_a_whole_file_request_says_the_comparison_and_the_bare_baseline_does_not(tmp_path: Path) -> None:
    copy = project(tmp_path)
    builder = await builder_for(copy)
    file = whole_file("calc.py", "the file")
    assert SAID in asked(file, copy, builder, tmp_path)
    bare = asked(replace(file, form=FileForm(bare=True)), copy, builder, tmp_path)  # the one-shot baseline
    assert "That is:" not in bare and "assert 7 == 6" in bare

NORM = ('def norm(x):\n    """The number itself, as an int."""\n    return int(x)\n\n\n'
        "def add(a, b):\n    total = norm(a)\n    return total - norm(b)\n")
NORM_TEST = ("from calc import add, norm\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
             "def test_norm():\n    assert norm(4) == 4\n")
NORM_RIGHT = "It subtracts.\n```python\ndef add(a, b):\n    total = norm(a)\n    return total + norm(b)\n```\n"


@pytest.mark.docker
async def test_a_fix_run_asks_with_what_its_settings_show_and_its_coverage_pass_measured(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the whole way: settings -> the run's builder -> the real coverage pass in Docker -> the request the model gets
    shown = ["That is: `add(2, 3)` returned `-1`, and the test expects `5`.",
             "- def norm(x):  (calc.py:1)\n  The number itself, as an int.\n",
             "The failing tests ran these lines of `add` (numbered as in the file, where it starts at line 6):\n"
             "- lines 7-8: `total = norm(a)` ... `return total - norm(b)`\n"]
    for prompt, expected in [({}, shown), ({"expected_actual": False, "callee_docs": False, "executed_lines": False}, [])]:
        ws = write_project(tmp_path / f"norm{len(expected)}", {"calc.py": NORM, "test_calc.py": NORM_TEST})
        scripted_llm.script(NORM_RIGHT, step="repair_function")
        settings = make_settings(ws, loop={"strategy": "candidates", "candidates": 1, "small_edits": 0}, prompt=prompt)
        events, done = await collect(fix(FixRequest(ws), settings))
        assert done.outcome == "green", "\n".join(describe(e) for e in events)
        asked = scripted_llm.requests_for("repair_function")[-1].messages[-1]["content"]
        assert "## The code to fix: `add` in `calc.py`" in asked
        assert [item for item in shown if item in asked] == expected, asked
        assert ("- def norm(x):  (calc.py:1)\n" in asked) and ("assert -1 == 5" in asked)  # as before, either way
