"""Candidate rounds end to end: real Docker sandbox, real HTTP to the scripted model, the run store read back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import (
    CandidateAsked,
    CandidateTested,
    EditRejected,
    EnvironmentReady,
    Message,
    RoundEnded,
)
from greenloop.agent.orchestration.describe import describe
from greenloop.tokens import count_text
from tests.agent.conftest import FIX_ADD, collect, plan, tree_bytes, write_project
from tests.support.scripted_llm import Reply

pytestmark = pytest.mark.docker

WRONG = "The bug: it subtracts.\n```python\ndef add(a, b):\n    return a * b\n```\n"
BROKEN = "```python\ndef add(a, b):\n    return (a +\n```\n"
A_TEST = "```python\ndef test_add():\n    assert add(2, 3) == -1\n```\n"
RIGHT = "It subtracts instead of adding.\n```python\ndef add(a, b):\n    return a + b\n```\n"


def candidates(settings_loop: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"strategy": "candidates", "candidates": 4, **(settings_loop or {})}


async def test_the_tests_pick_the_right_candidate_and_the_records_keep_all_four(
    calc_project: Path, scripted_llm: Any, make_settings: Any, tmp_path: Path
) -> None:
    scripted_llm.script(WRONG, BROKEN, A_TEST, RIGHT, step="repair_function", repeat=False)
    before = tree_bytes(calc_project)
    settings = make_settings(calc_project, loop=candidates(), llm={"seed": 77})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert done.iterations == 1 and done.offers_changes
    assert [c.path for c in done.changes.files] == ["calc.py"]
    assert "+    return a + b" in done.changes.diff
    assert tree_bytes(calc_project) == before  # nothing on disk until the person accepts
    # retrieval.coverage (the default) ran the failing test and its file-mate under coverage, once, and says so
    notes = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Coverage pass")]
    assert len(notes) == 1 and "1 failing and 1 passing tests ran under coverage" in notes[0], notes
    tested = [e for e in events if isinstance(e, CandidateTested)]
    assert [(e.index, e.status) for e in tested] == [(1, "tested"), (2, "rejected"), (3, "rejected"), (4, "tested")]
    assert tested[0].passed == 0 and tested[0].scope == "failing" and not tested[0].green  # a * b: 6, not 5
    assert "does not parse" in tested[1].reason
    assert "defines `test_add`, not `add`" in tested[2].reason
    assert tested[3].green and tested[3].scope == "all" and tested[3].passed == 2
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert len(ended) == 1 and ended[0].ended == "green" and ended[0].best == 4
    # every candidate is asked with the same messages (one prompt prefix), its own seed, the first greedy
    requests = scripted_llm.requests_for("repair_function")
    assert len(requests) == 4
    assert all(r.messages == requests[0].messages for r in requests)
    seeds = [r.body["seed"] for r in requests]
    assert len(set(seeds)) == 4
    assert [r.body["temperature"] for r in requests] == [0.0, 0.8, 0.8, 0.8]
    asked = [e for e in events if isinstance(e, CandidateAsked)]
    assert [e.seed for e in asked] == seeds
    prompt = requests[0].messages[-1]["content"]
    assert "return a - b" in prompt and "## The tests (the specification" in prompt
    assert "assert add(2, 3) == 5" in prompt  # the test's code, shown as the spec
    # the run store keeps every candidate: seed, temperature, prompt hash, diff, result or reason
    db = sqlite3.connect(tmp_path / "runs.sqlite3")
    stored = [json.loads(row[0]) for row in db.execute("SELECT data FROM events WHERE data LIKE '%candidate_tested%'")]
    assert [(s["index"], s["status"], s["seed"]) for s in stored] == [(e.index, e.status, e.seed) for e in tested]
    assert stored[3]["diff"].count("+    return a + b") == 1 and stored[0]["prompt_hash"] == tested[0].prompt_hash


async def test_an_echo_of_the_code_is_rejected_and_a_tested_change_is_asked_once_for_another(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model often names the bug and then writes the function out unchanged; asked again, it echoed
    # it again every time (decision repair-echo), so the echo is rejected and the next candidate asked
    echo = "It should add.\n```python\ndef add(a, b):\n    return a - b\n```\n"
    scripted_llm.script(echo, WRONG, WRONG, RIGHT, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates({"candidates": 3}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    tested = [e for e in events if isinstance(e, CandidateTested)]
    assert [(e.index, e.status, e.green) for e in tested] == [
        (1, "rejected", False), (2, "tested", False), (3, "tested", True)]
    assert "is the same as the one in the file: it changes nothing" in tested[0].reason
    assert "asked again" not in tested[0].reason
    requests = scripted_llm.requests_for("repair_function")
    assert len(requests) == 4
    assert requests[1].messages == requests[0].messages and requests[1].body["seed"] != requests[0].body["seed"]
    # candidate 3 repeats candidate 2's tested change: told what it gave, it makes another
    assert requests[2].messages == requests[0].messages
    again = requests[3].messages
    assert again[:-2] == requests[2].messages and "was tested already" in again[-1]["content"]
    assert "test_add" in again[-1]["content"] and requests[3].body["seed"] == requests[2].body["seed"]


async def test_candidates_that_make_things_worse_leave_the_snapshot_byte_identical(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # both candidates break `add` differently and pass no more tests: nothing is built on damage
    worse = "```python\ndef add(a, b):\n    raise ValueError(a)\n```\n"
    scripted_llm.script(WRONG, worse, step="repair_function")
    scripted_llm.script(WRONG, step="repair_file")
    scripted_llm.script("no blocks here", step="repair_blocks")
    settings = make_settings(calc_project, loop=candidates({"candidates": 2, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "budget"
    assert done.changes.files == [] and not done.offers_changes
    assert "No candidate was better than the code as it was" in done.summary
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert [e.moved for e in ended] == [False, False]
    # the second round changes one thing and says what the best failed attempt gave
    assert ended[0].why == "the top-ranked function" and ended[1].why != ended[0].why
    second = (scripted_llm.requests_for("repair_function") + scripted_llm.requests_for("repair_file"))[-1]
    prompt = next(m["content"] for m in second.messages if m["role"] == "user")  # the round's own request
    assert "An earlier attempt (it did not work)" in prompt


async def test_a_stuck_verdict_comes_only_when_every_approach_was_tried(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(WRONG, step="repair_function")
    scripted_llm.script(WRONG.replace("python", "python"), step="repair_file")
    scripted_llm.script("nothing", step="repair_blocks")
    settings = make_settings(calc_project, loop=candidates({"candidates": 1, "max_iterations": 10}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "stuck", done.summary
    whys = [e.why for e in events if isinstance(e, RoundEnded)]
    assert whys[0] == "the top-ranked function" and "changes in several places" in whys
    assert "round 1" in done.evidence


async def test_fix_never_changes_a_test_file_whatever_the_model_sends(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the README demo's first iteration edited the test's assertion to match the bug
    to_test = {"kind": "edit", "path": "test_calc.py", "search": "assert add(2, 3) == 5",
               "replace": "assert add(2, 3) == -1"}
    whole = {"kind": "write", "path": "test_calc.py", "content": "def test_add():\n    pass\n"}
    scripted_llm.script(plan(to_test, whole), plan(FIX_ADD), step="debug_plan", repeat=False)
    settings = make_settings(calc_project, loop={"strategy": "plan", "diagnosis": False})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert [c.path for c in done.changes.files] == ["calc.py"]
    refused = [e for e in events if isinstance(e, EditRejected)]
    assert len(refused) == 2 and all("is a test file" in e.reason for e in refused)
    repair = scripted_llm.requests_for("debug_plan")[1].messages[-1]["content"]
    assert "the tests are the specification" in repair  # the reason goes back to the model


async def test_a_blocks_candidate_that_edits_a_test_is_rejected(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    to_test = ("test_calc.py\n<<<<<<< SEARCH\n    assert add(2, 3) == 5\n=======\n    assert add(2, 3) == -1\n"
               ">>>>>>> REPLACE\n")
    right = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    scripted_llm.script(WRONG, step="repair_function")
    scripted_llm.script(WRONG, step="repair_file")
    scripted_llm.script(to_test, right, step="repair_blocks", repeat=False)
    settings = make_settings(calc_project, loop=candidates({"candidates": 2, "max_iterations": 5}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert [c.path for c in done.changes.files] == ["calc.py"]
    rejected = [e for e in events if isinstance(e, CandidateTested) and e.route == "blocks" and e.status == "rejected"]
    assert rejected and "is a test file" in rejected[0].reason


async def test_edit_tests_opts_in(calc_project: Path, scripted_llm: Any, make_settings: Any) -> None:
    to_test = {"kind": "edit", "path": "test_calc.py", "search": "assert add(2, 3) == 5",
               "replace": "assert add(2, 3) == -1"}
    scripted_llm.script(plan(to_test), step="debug_plan")
    settings = make_settings(calc_project, loop={"strategy": "plan", "diagnosis": False, "edit_tests": True})
    _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green"
    assert [c.path for c in done.changes.files] == ["test_calc.py"]


ECHO_ADD = "It is right.\n```python\ndef add(a, b):\n    return a + b\n```\n"


async def test_a_test_written_with_the_code_gets_its_wrong_expectations_corrected_where_they_failed(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # generation's own tests (and fix with loop.edit_tests): the 1.5B model wrote celsius(-10) == -14
    # into its test, then wrote the right function back unchanged in every candidate
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(2, 2) == 5\n",
        "test_more.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 1\n",
    })
    scripted_llm.script(ECHO_ADD, step="repair_function")
    dropped = "```python\nassert add(2, 2) == 4\nadd(0, 0)\n```\n"
    corrected = "2 + 2 is 4, not 5; 0 + 0 is 0.\n```python\nassert add(2, 2) == 4\nassert add(0, 0) == 0\n```\n"
    scripted_llm.script(dropped, corrected, step="repair_test", repeat=False)
    settings = make_settings(ws, loop=candidates({"candidates": 2, "edit_tests": True, "max_iterations": 3}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert [c.path for c in done.changes.files] == ["test_calc.py", "test_more.py"]
    assert "+    assert add(2, 2) == 4" in done.changes.diff and "+    assert add(0, 0) == 0" in done.changes.diff
    assert "-    assert add(2, 3) == 5" not in done.changes.diff  # only the statements the tests stopped at
    ended = [e for e in events if isinstance(e, RoundEnded)]
    # round 1: the model gives `add` back unchanged in every candidate; round 2: both failing checks
    assert [(e.approach, e.moved) for e in ended] == [
        ("`add` in calc.py", False), ("checks in test_calc.py, test_more.py (2 failing)", True)]
    tested = [e for e in events if isinstance(e, CandidateTested) and e.iteration == 2]
    assert [(e.status, e.green) for e in tested] == [("rejected", False), ("tested", True)]
    assert "fewer checks" in tested[0].reason
    [first, *_] = scripted_llm.requests_for("repair_test")
    asked = first.messages[-1]["content"]
    assert "The code it tests:" in asked and "return a + b" in asked
    assert "1. `test_add` in `test_calc.py`, line 6:\n```python\nassert add(2, 2) == 5\n```" in asked
    assert "assert 4 == 5" in asked  # what the code gave, from the failure, and in words
    assert "That is: `add(2, 2)` returned `4`, and the check expects `5`." in asked
    assert "give the 2 check(s)" in asked
    # round 1's feedback was about `add` (its echoes): the test's prompt is not told to "do something different"
    assert "## Earlier attempts" not in asked


async def test_a_test_that_gets_further_is_kept_and_its_next_check_asked(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # one test, two wrong checks: pytest stops at the first, so the counts cannot tell a correction of it
    # from no change; the test now stopping a line later can (progress.py)
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 5\n"
                        "    assert add(1, 1) == 3\n    assert add(2, 3) == 5\n",
    })
    scripted_llm.script(ECHO_ADD, step="repair_function")
    # the first reply is prose alone (as 2 of 4 were in the generation bench): it is asked for the check
    scripted_llm.script("The check is wrong: 2 + 2 is 4.", "```python\nassert add(2, 2) == 4\n```\n", step="repair_test",
                        contains="add(2, 2) == 5", repeat=False)
    scripted_llm.script("```python\nassert add(1, 1) == 2\n```\n", step="repair_test", contains="add(1, 1) == 3")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 4}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    ended = [(e.approach, e.moved, e.ended) for e in events if isinstance(e, RoundEnded)]
    assert ended == [("`add` in calc.py", False, "no_candidates"), ("checks in test_calc.py (1 failing)", True, "better"),
                     ("checks in test_calc.py (1 failing)", True, "green")]
    assert "+    assert add(2, 2) == 4\n+    assert add(1, 1) == 2" in done.changes.diff
    follow = scripted_llm.requests_for("repair_test")[1].messages
    assert follow[-1]["content"] == "Now give the 1 check(s), corrected or as they are, in one code block."


async def test_a_check_that_should_raise_becomes_pytest_raises_with_its_import(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model's roman test: `assert to_roman(5000) == "MMMM"` where the code raises ValueError on purpose
    ws = write_project(tmp_path / "ws", {
        "roman.py": "def to_roman(n):\n    if n > 3999:\n        raise ValueError('too big')\n    return 'I' * n\n",
        "test_roman.py": "from roman import to_roman\n\n\ndef test_to_roman():\n    assert to_roman(3) == 'III'\n"
                         "    assert to_roman(5000) == 'MMMM'\n",
    })
    scripted_llm.script("```python\ndef to_roman(n):\n    if n > 3999:\n        raise ValueError('too big')\n"
                        "    return 'I' * n\n```\n", step="repair_function")
    scripted_llm.script("It raises on purpose.\n```python\nwith pytest.raises(ValueError):\n    to_roman(5000)\n```\n",
                        step="repair_test")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert "+import pytest\n" in done.changes.diff
    assert "+    with pytest.raises(ValueError):\n+        to_roman(5000)" in done.changes.diff
    [asked] = scripted_llm.requests_for("repair_test")
    assert "ValueError: too big" in asked.messages[-1]["content"]


async def test_a_test_importing_a_name_from_the_wrong_module_is_told_where_it_is(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model's todo-store: `from todo import Todo, TodoList` where TodoList is in todo_list.py
    ws = write_project(tmp_path / "ws", {
        "todo.py": "class Todo:\n    def __init__(self, title):\n        self.title = title\n",
        "todo_list.py": "from todo import Todo\n\n\nclass TodoList:\n    def __init__(self):\n        self.items = []\n",
        "tests/test_todo.py": "from todo import Todo, TodoList\n\n\ndef test_empty():\n    assert TodoList().items == []\n",
    })
    scripted_llm.script("```python\nclass Todo:\n    pass\n```\n", step="repair_file")
    scripted_llm.script("```python\nfrom todo import Todo\nfrom todo_list import TodoList\n```\n", step="repair_test")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert "+from todo import Todo\n+from todo_list import TodoList" in done.changes.diff
    [asked] = scripted_llm.requests_for("repair_test")
    assert "`TodoList` is not in `todo`; it is defined in `todo_list.py` (line 4)." in asked.messages[-1]["content"]


async def test_many_wrong_tests_in_one_file_are_corrected_in_one_round(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the model's word-count tests all expected {'world': 2} for one "world": one test a round is too slow
    wrong = "".join(f"\n\ndef test_{i}():\n    assert add({i}, 1) == {i + 2}\n" for i in range(4))
    ws = write_project(tmp_path / "ws", {"calc.py": "def add(a, b):\n    return a + b\n",
                                         "test_calc.py": f"from calc import add\n{wrong}"})
    scripted_llm.script(ECHO_ADD, step="repair_function")
    right = "".join(f"assert add({i}, 1) == {i + 1}\n" for i in range(4))
    fewer = "".join(f"assert add({i}, 1) == {i + 1}\n" for i in range(3))
    scripted_llm.script(f"```python\n{fewer}```\n", f"```python\n{right}```\n", step="repair_test", repeat=False)
    settings = make_settings(ws, loop=candidates({"candidates": 2, "edit_tests": True, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert [(e.approach, e.why.split(":")[0]) for e in ended] == [
        ("`add` in calc.py", "the top-ranked function"), ("checks in test_calc.py (4 failing)", "the failing checks")]
    # a reply with three of the four checks corrects those three (each where it is most alike) and
    # keeps the fourth as it is: never a dropped check
    first, second = [e for e in events if isinstance(e, CandidateTested) and e.iteration == 2]
    assert (first.status, first.passed, first.failed, second.green) == ("tested", 3, 1, True)
    assert "-    assert add(3, 1) == 5" not in first.diff
    [request, *_] = scripted_llm.requests_for("repair_test")
    assert "4. `test_3` in `test_calc.py`" in request.messages[-1]["content"]
    assert "return a + b" in request.messages[-1]["content"]  # the code it tests, whole


async def test_a_missing_module_is_installed_without_a_model_call(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "dump.py": "import tomli_w\n\n\ndef dump(d):\n    return tomli_w.dumps(d)\n",
        "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
        "requirements.txt": "tomli-w\n",  # declared: installed without asking
    })
    settings = make_settings(ws, loop=candidates())
    events, done = await collect(fix(FixRequest(ws), settings))
    # a declared package is the environment step's, before any round (agent/environment/step.py): the
    # project's tests then run as its own environment has them, and nothing is left for a round to change
    assert done.outcome == "already_green", done.summary + done.evidence
    [ready] = [e for e in events if isinstance(e, EnvironmentReady)]
    assert ready.source == "declared ranges" and ready.packages == ["tomli-w"]
    assert done.changes.files == [] and scripted_llm.requests == []


async def test_the_one_shot_baseline_asks_once_for_the_whole_file(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    whole = "```python\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n```\n"
    scripted_llm.script(whole, step="repair_file")
    settings = make_settings(calc_project, loop={"strategy": "oneshot"})
    _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green"
    [request] = scripted_llm.requests_for("repair_file")
    assert request.body["temperature"] == 0.0
    assert "## The tests" not in request.messages[-1]["content"]  # bare: the failures and the file only


async def test_a_reply_of_prose_alone_is_asked_for_its_code(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model said what was wrong with below_zero in three sentences and stopped (read from the runs)
    prose = "The bug is that add subtracts b from a instead of adding them."
    scripted_llm.script(prose, RIGHT, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates({"candidates": 1}))
    _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    first, follow = scripted_llm.requests_for("repair_function")
    assert follow.messages[: len(first.messages)] == first.messages  # the same prefix, then the reply
    assert follow.messages[-2] == {"role": "assistant", "content": prose}
    assert "Now give the whole corrected `add`" in follow.messages[-1]["content"]
    assert follow.body["seed"] == first.body["seed"]


async def test_requests_too_long_for_the_window_are_passed_over_and_the_run_says_so(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    settings = make_settings(calc_project, loop=candidates({"max_iterations": 6}), llm={"context_window": 256})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "stuck", done.summary + done.evidence
    assert scripted_llm.requests == []  # nothing that would not fit was sent
    assert not [e for e in events if isinstance(e, (CandidateAsked, RoundEnded))]  # no round was spent on them
    passed_over = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Passed over")]
    assert len(passed_over) >= 2 and all("longer than the model's context window" in t for t in passed_over)
    assert "context window" in done.evidence


async def test_a_server_that_refuses_the_request_as_too_long_is_a_rejected_round_not_an_error(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # llama-server's own answer when llm.context_window is not set (youtube-dl-14 of the realbugs bench)
    too_long = Reply(status=400, error="request (8936 tokens) exceeds the available context size (8192 tokens), "
                     "try increasing it")
    scripted_llm.script(too_long)  # every route: the function, hotter, then blocks
    settings = make_settings(calc_project, loop=candidates({"max_iterations": 6}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "stuck", done.summary + done.evidence
    rejected = [e for e in events if isinstance(e, CandidateTested)]
    assert rejected and all(e.status == "rejected" and "context window" in e.reason for e in rejected)
    assert all(e.tried == 1 for e in events if isinstance(e, RoundEnded))  # every candidate would send it


async def test_a_long_function_gets_room_for_all_of_it_in_the_reply(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # youtube-dl's 139-line process_video_result came back cut at a fixed 1,024 tokens, every time
    steps = "".join(f"    total = total + {n}  # step {n} of the long computation, kept as it is\n" for n in range(60))
    code = "def long_sum(values):\n    total = 0\n" + steps + "    return total - sum(values)\n"
    project = write_project(tmp_path / "long", {"calc.py": code,
                                                 "test_calc.py": "from calc import long_sum\n\n\ndef test_long():\n"
                                                                 "    assert long_sum([1]) == 1771\n"})
    right = "It subtracts the values.\n```python\n" + code.replace("total - sum(values)", "total + sum(values)") + "```\n"
    scripted_llm.script(right, step="repair_function", repeat=False)
    # the function rung's own room: a function this long is asked for its changed lines (rungs/region.py) unless
    # that rung is off, as here
    settings = make_settings(project, loop=candidates({"candidates": 1, "rungs_off": ["region"]}))
    _, done = await collect(fix(FixRequest(project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    [request] = scripted_llm.requests_for("repair_function")
    assert request.body["max_tokens"] > count_text(code) > 1024  # room for all of it, which 1,024 was not
    assert request.body["max_tokens"] <= settings.llm.max_tokens


async def test_an_approach_whose_request_cannot_fit_the_window_is_passed_over_in_the_same_round(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # youtube-dl's 600-line `_real_extract` was a round of its own that asked nothing ("the request is too
    # long"): one of three rounds spent. Now the next approach is asked in that round instead: here the
    # function asked whole needs room for itself again in the reply, the SEARCH/REPLACE blocks on its file less.
    long_doc = "".join(f"    line {i}: what this function does, at length, in words.\n" for i in range(62))
    ws = write_project(tmp_path / "ws", {
        "calc.py": f'def add(a, b):\n    """\n{long_doc}    """\n    return a - b\n\n\ndef double(x):\n'
                   "    return add(x, x)\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    scripted_llm.script(RIGHT, step="repair_function")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "max_iterations": 1}),
                             llm={"context_window": 2048, "max_tokens": 256}, retrieval={"coverage": False})
    events, done = await collect(fix(FixRequest(ws), settings))
    passed_over = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Passed over")]
    assert passed_over and passed_over[0].startswith("Passed over `add` in calc.py (the top-ranked function)")
    asked = [e for e in events if isinstance(e, CandidateAsked)]
    assert asked and all("`add`" not in e.target for e in asked)  # the round asked the next approach
    assert all(len(str(r.messages)) < 12_000 for r in scripted_llm.requests_for("repair_function"))
    assert done.iterations <= 1


async def test_the_request_sides_with_the_code_and_the_checks_are_rewritten_before_any_model_candidate(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's temperature project: the code is right, the 1.5B model's test expects -14
    ws = write_project(tmp_path / "ws", {
        "temperature.py": "def c_to_f(c):\n    \"\"\"Celsius to Fahrenheit.\"\"\"\n    return c * 9 / 5 + 32\n\n\n"
                          "def k_to_c(k):\n    return k - 273.15\n",
        "test_temperature.py": "from temperature import c_to_f, k_to_c\n\n\ndef test_f():\n    assert c_to_f(0) == 32\n"
                               "    assert c_to_f(-10) == -14\n\n\ndef test_k():\n    assert k_to_c(0) == 0\n",
    })
    scripted_llm.script("-10 * 9 / 5 + 32 = 14\n```python\n14\n```\n", step="repair_verdict", contains="c_to_f(-10)")
    scripted_llm.script(r"0 - 273.15, so \(\boxed{-273.15}\).", step="repair_verdict", contains="k_to_c(0)")
    settings = make_settings(ws, loop=candidates({"candidates": 2, "edit_tests": True, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert done.iterations == 1 and [c.path for c in done.changes.files] == ["test_temperature.py"]
    assert "+    assert c_to_f(-10) == 14.0" in done.changes.diff and "+    assert k_to_c(0) == -273.15" in done.changes.diff
    # the first candidate is the rewritten checks, asked of no model; the round ended there
    asked = [e for e in events if isinstance(e, CandidateAsked)]
    assert [(e.index, e.seed, e.route) for e in asked] == [(1, None, "checks")]
    assert scripted_llm.requests_for("repair_test") == [] and scripted_llm.requests_for("repair_function") == []
    # the question shows neither value nor the code's body: the answer is the model's own
    questions = [r.messages[-1]["content"] for r in scripted_llm.requests_for("repair_verdict")]
    assert len(questions) == 2 and "what must `c_to_f(-10)` give?" in questions[0]
    assert "Celsius to Fahrenheit." in questions[0]
    assert not any("-14" in q or "9 / 5" in q or "273.15" in q for q in questions)
    said = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Worked out")]
    assert len(said) == 1 and said[0].count("the code's value") == 2


async def test_an_answer_given_as_arithmetic_is_computed_in_the_sandbox_not_taken_from_the_models_head(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model writes the formula right and does the arithmetic wrong ("273.15 * 9/5 + 32 = 80.0")
    ws = write_project(tmp_path / "ws", {
        "temperature.py": "def c_to_f(c):\n    return c * 9 / 5 + 32\n\n\ndef k_to_c(k):\n    return k - 273.15\n",
        "test_temperature.py": "from temperature import c_to_f, k_to_c\n\n\ndef test_f():\n"
                               "    assert c_to_f(273.15) == 0\n\n\ndef test_k():\n    assert k_to_c(0) == 0\n",
    })
    # asked for the value, it gets the sum wrong and decides nothing; asked again, it may give a formula
    scripted_llm.script("(273.15 * 9/5) + 32 = 80.0\n```python\n80.0\n```\n", step="repair_verdict",
                        regex=r"c_to_f\(273\.15\)` give\? Work it out in a few short lines of plain words \(no code\)")
    scripted_llm.script("(273.15 * 9/5) + 32\n```python\n273.15 * 9 / 5 + 32\n```\n", step="repair_verdict",
                        regex=r"c_to_f\(273\.15\)[\s\S]*one Python expression")
    # an expression that calls the code in question decides nothing: it would only repeat the code
    scripted_llm.script("```python\nk_to_c(0)\n```\n", step="repair_verdict", contains="k_to_c(0)")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    said = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Worked out")]
    assert said and "`273.15 * 9 / 5 + 32` = 523.67" in said[0], "\n".join(describe(e) for e in events)
    assert "`k_to_c(0)`: neither value" in said[0]
    assert "+    assert c_to_f(273.15) == 523.67" in done.changes.diff
    asked = [r.messages[-1]["content"] for r in scripted_llm.requests_for("repair_verdict")]
    # c_to_f: decided by the second question; k_to_c: asked all three times, never decided
    assert len(asked) == 5 and sum("one Python expression" in q for q in asked) == 3
    assert "assert k_to_c(0) == 0" in (ws / "test_temperature.py").read_text()  # nothing applied before accepting


async def test_a_conflict_is_asked_for_an_expression_then_a_formula_until_one_decides(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "temperature.py": "def f_to_c(f):\n    return (f - 32) * 5 / 9\n",
        "test_temperature.py": "from temperature import f_to_c\n\n\ndef test_c():\n    assert f_to_c(0) == 32\n",
    })
    scripted_llm.script("I cannot tell.", step="repair_verdict", regex=r"plain words \(no code\)")
    # an expression that calls the code decides nothing; the formula question is asked last
    scripted_llm.script("```python\nf_to_c(0)\n```\n", step="repair_verdict", regex=r"Do not work the value out")
    scripted_llm.script("```python\n(0 - 32) * 5 / 9\n```\n", step="repair_verdict", regex=r"the value itself, or one")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert "+    assert f_to_c(0) == pytest.approx(-17.77777778)" in done.changes.diff
    asked = [r.messages[-1]["content"] for r in scripted_llm.requests_for("repair_verdict")]
    assert len(asked) == 3 and "Do not work the value out yourself" in asked[1] and "the value itself" in asked[2]
    said = " ".join(e.text for e in events if isinstance(e, Message) and e.text.startswith("Worked out"))
    assert "`(0 - 32) * 5 / 9` = -17.77777777777778" in said


async def test_a_long_value_is_asked_for_only_as_an_expression_and_each_answer_says_its_own_working(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's fizzbuzz: asked for fizzbuzz(100) as a value, both questions ran out of tokens
    fizz = ("def fizzbuzz(n):\n    return ['FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0"
            " else str(i) for i in range(1, n + 1)]\n\n\ndef double(x):\n    return x * 2\n")
    wrong = [("Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i)) for i in range(1, 31)]  # no FizzBuzz
    ws = write_project(tmp_path / "ws", {
        "fizz.py": fizz,
        "test_fizz.py": f"from fizz import double, fizzbuzz\n\n\ndef test_fizzbuzz():\n    assert fizzbuzz(30) == {wrong!r}\n"
                        "\n\ndef test_double():\n    assert double(7) == 15\n",
    })
    comprehension = ('["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i)'
                     " for i in range(1, 31)]")
    scripted_llm.script(f"```python\n{comprehension}\n```\n", step="repair_verdict", contains="fizzbuzz(30)")
    # double(7): the value question's reply is a sum that computes to neither side; the formula question decides
    scripted_llm.script("```python\n7 * 3\n```\n", step="repair_verdict", regex=r"double\(7\)` give\? Work it out in a few short lines of plain words \(no code\)")
    scripted_llm.script("Twice seven.\n```python\n14\n```\n", step="repair_verdict", regex=r"double\(7\)[\s\S]*one Python expression")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    asked = [r.messages[-1]["content"] for r in scripted_llm.requests_for("repair_verdict")]
    about_fizz = [q for q in asked if "fizzbuzz(30)" in q]
    assert len(about_fizz) == 1 and "one Python expression" in about_fizz[0]  # never asked to write 30 values out
    said = " ".join(e.text for e in events if isinstance(e, Message) and e.text.startswith("Worked out"))
    assert f"`{comprehension}` = " in said and "`double(7)`: the code's value" in said
    assert "7 * 3" not in said  # the formula question's answer is what is shown, not the first question's
    assert "'FizzBuzz'" in done.changes.diff and "+    assert double(7) == 14" in done.changes.diff


# fizzbuzz without 'FizzBuzz' (right for n < 15): the code the value questions below side with
FIZZ_CODE = ("def fizzbuzz(n):\n    out = []\n    for i in range(1, n + 1):\n"
             "        out.append('Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i))\n    return out\n")


async def _answered_green(ws: Path, scripted_llm: Any, make_settings: Any, answer: str) -> tuple[Any, str]:
    """`fix` with tests that may change, one candidate, one round, and `answer` to every value question:
    it must end green. Its Done, and the first question asked."""
    scripted_llm.script(answer, step="repair_verdict")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    return done, scripted_llm.requests_for("repair_verdict")[0].messages[-1]["content"]


async def test_a_check_on_names_the_test_bound_is_asked_about_with_the_literal_call(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's word-count project: the code is right, the test counts "world" twice
    ws = write_project(tmp_path / "ws", {
        "wordcount.py": "import re\n\n\ndef count_words(text):\n    words = re.findall(r'\\b\\w+\\b', text.lower())\n"
                        "    return {w: words.count(w) for w in words}\n",
        "test_wordcount.py": "from wordcount import count_words\n\n\ndef test_count_words():\n"
                             "    text = \"Hello, world! Hello, universe.\"\n"
                             "    assert count_words(text) == {'hello': 2, 'world': 2, 'universe': 1}\n\n\n"
                             "def test_result():\n    text = \"Hello, world! Hello, universe.\"\n"
                             "    words = count_words(text)\n"
                             "    assert words == {'hello': 2, 'world': 2, 'universe': 1}\n",
    })
    done, question = await _answered_green(ws, scripted_llm, make_settings,
                                           "```python\n{'hello': 2, 'world': 1, 'universe': 1}\n```\n")
    assert 'what must `count_words("Hello, world! Hello, universe.")` give?' in question
    assert "+    assert count_words(text) == {'hello': 2, 'world': 1, 'universe': 1}" in done.changes.diff
    assert "+    assert words == {'hello': 2, 'world': 1, 'universe': 1}" in done.changes.diff
    assert len(scripted_llm.requests_for("repair_verdict")) == 1  # the same call, got and want: asked once


async def test_a_parametrized_case_is_asked_about_and_its_entry_rewritten_the_other_cases_untouched(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's fizzbuzz project (bf93d33): the code is right, one entry expects '9'
    test = ("import pytest\nfrom fizz import fizzbuzz\n\n\n@pytest.mark.parametrize('n, expected', [\n"
            "    (2, ['1', '2']),\n    (3, ['1', '2', 'Fizz']),  # three\n    (4, ['1', '2', '3', '4']),\n])\n"
            "def test_fizzbuzz(n, expected):\n    assert fizzbuzz(n) == expected\n")
    ws = write_project(tmp_path / "ws", {"fizz.py": FIZZ_CODE, "test_fizz.py": test})
    done, question = await _answered_green(ws, scripted_llm, make_settings, "```python\n['1', '2', 'Fizz', '4']\n```\n")
    assert "what must `fizzbuzz(4)` give?" in question
    assert "-    (4, ['1', '2', '3', '4']),\n+    (4, ['1', '2', 'Fizz', '4']),\n" in done.changes.diff
    added = [row for row in done.changes.diff.splitlines() if row.startswith("+") and not row.startswith("+++")]
    assert len(added) == 1  # one line changed: the entry; the statement and the other entries stay
    assert scripted_llm.requests_for("repair_function") == [] and scripted_llm.requests_for("repair_checks") == []


async def test_a_function_given_as_the_answer_is_computed_in_the_sandbox_on_the_calls_arguments(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model, asked what fizzbuzz(9) must give, wrote the function as one comprehension
    test = ("from fizz import fizzbuzz\n\n\ndef test_fizzbuzz():\n    assert fizzbuzz(2) == ['1', '2']\n"
            "    assert fizzbuzz(4) == ['1', '2', '3', '4']\n")
    ws = write_project(tmp_path / "ws", {"fizz.py": FIZZ_CODE, "test_fizz.py": test})
    reply = ("It is ['1', '2', 'Fizz', 'FizzBuzz'].\n```python\ndef fizzbuzz(n):\n"
             "    return ['Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i) for i in range(1, n + 1)]\n```\n")
    done, _ = await _answered_green(ws, scripted_llm, make_settings, reply)
    assert "+    assert fizzbuzz(4) == ['1', '2', 'Fizz', '4']" in done.changes.diff
    assert len(scripted_llm.requests_for("repair_verdict")) == 1  # decided by the first question's answer


async def test_the_request_siding_with_the_check_is_told_to_the_code_rung_and_the_test_stays(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    scripted_llm.script("2 + 3\n```python\n5\n```\n", step="repair_verdict")
    scripted_llm.script(RIGHT, step="repair_function")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert [c.path for c in done.changes.files] == ["calc.py"]
    prompt = scripted_llm.requests_for("repair_function")[0].messages[-1]["content"]
    assert "`add(2, 3)` must give `5`; the code gives `-1`." in prompt
    assert [e.route for e in events if isinstance(e, CandidateAsked)] == ["function"]


async def test_a_method_the_tests_read_as_an_attribute_becomes_a_property_asked_of_no_model(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's bank-account (bf93d33, repeat 2): `account.balance == 100.0` against
    # `def balance(self)`, and `<bound method BankAccount.balance of ...>` in every failure
    ws = write_project(tmp_path / "ws", {
        "bank.py": "class Account:\r\n    def __init__(self, start):\r\n        self._start = start\r\n\r\n"
                   "    def balance(self):\r\n        return self._start\r\n\r\n"
                   "    def deposit(self, amount):\r\n        self._start += amount\r\n",
        "test_bank.py": "from bank import Account\n\n\ndef test_balance():\n    assert Account(100).balance == 100\n\n\n"
                        "def test_deposit():\n    account = Account(1)\n    account.deposit(2)\n    assert account.balance == 3\n",
    })
    scripted_llm.script("No idea.", step="repair_blocks")
    scripted_llm.script("It is right.\n```python\ndef balance(self):\n    return self._start\n```\n", step="repair_function")
    settings = make_settings(ws, loop=candidates({"candidates": 2, "max_iterations": 2}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert [c.path for c in done.changes.files] == ["bank.py"]  # the tests are the spec
    added = [row for row in done.changes.diff.splitlines() if row.startswith("+") and not row.startswith("+++")]
    assert [row.rstrip("\r") for row in added] == ["+    @property"]  # `deposit(self, amount)` is no property
    first = next(e for e in events if isinstance(e, CandidateAsked))
    assert (first.index, first.seed, first.route) == (1, None, "blocks")  # the known change, no model asked
    assert scripted_llm.requests_for("repair_function") == []


async def test_a_check_the_request_sides_with_is_never_asked_to_be_rewritten_to_the_codes_value(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the generation bench's slugify (bf93d33, repeat 2): the request sided with the check, the model gave
    # the code back four times, then the checks rung rewrote the check to expect the code's trailing "-"
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    scripted_llm.script("2 + 3\n```python\n5\n```\n", step="repair_verdict")
    scripted_llm.script("It is right.\n```python\ndef add(a, b):\n    return a - b\n```\n", step="repair_function")
    scripted_llm.script("```python\nassert add(2, 3) == -1\n```\n", step="repair_test")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 3}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome != "green" and not done.changes.files, "\n".join(describe(e) for e in events)
    assert scripted_llm.requests_for("repair_test") == []  # no rung asked to rewrite the upheld check
    routes = {e.route for e in events if isinstance(e, CandidateAsked)}
    assert "function" in routes and routes <= {"function", "blocks"}  # the code's rungs only


async def test_a_test_with_several_wrong_expectations_is_settled_check_after_check_within_one_round(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # pytest stops at a test's first failing check: each rewrite that gets further lets the next be asked
    ws = write_project(tmp_path / "ws", {
        "temperature.py": "def c_to_f(c):\n    return c * 9 / 5 + 32\n",
        "test_temperature.py": "from temperature import c_to_f\n\n\ndef test_f():\n    assert c_to_f(-10) == -14\n"
                               "    assert c_to_f(100) == 200\n    assert c_to_f(5) == 41\n    assert c_to_f(0) == 0\n",
    })
    for call, value in (("c_to_f(-10)", "14"), ("c_to_f(100)", "212.0"), ("c_to_f(0)", "32")):
        scripted_llm.script(f"Worked out.\n```python\n{value}\n```\n", step="repair_verdict", contains=call)
    settings = make_settings(ws, loop=candidates({"candidates": 2, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green" and done.iterations == 1, "\n".join(describe(e) for e in events)
    diff = done.changes.diff
    assert "+    assert c_to_f(-10) == 14.0\n+    assert c_to_f(100) == 212.0\n" in diff and "+    assert c_to_f(0) == 32.0" in diff
    assert "-    assert c_to_f(5) == 41" not in diff  # a check that was right is left alone
    ended = [(e.approach, e.moved) for e in events if isinstance(e, RoundEnded)]
    assert ended == [("checks in test_temperature.py (1 failing)", True)] * 3
    asked = [r.messages[-1]["content"].split("what must `")[1].split("`")[0]
             for r in scripted_llm.requests_for("repair_verdict")]
    assert asked == ["c_to_f(-10)", "c_to_f(100)", "c_to_f(0)"]  # each where the test stopped, in turn
    assert scripted_llm.requests_for("repair_test") == []


async def test_after_the_rewritten_checks_moved_the_state_the_same_round_asks_for_the_code(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # one wrong check (the code is right) and one wrong function (the check is right), in one iteration
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef c_to_f(c):\n    return c * 9 / 5 + 32\n",
        "test_calc.py": "from calc import add, c_to_f\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                        "def test_f():\n    assert c_to_f(-10) == -14\n",
    })
    scripted_llm.script("```python\n5\n```\n", step="repair_verdict", contains="add(2, 3)")
    scripted_llm.script("```python\n14\n```\n", step="repair_verdict", contains="c_to_f(-10)")
    scripted_llm.script(RIGHT, step="repair_function")
    settings = make_settings(ws, loop=candidates({"candidates": 1, "edit_tests": True, "max_iterations": 1}))
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green" and done.iterations == 1, "\n".join(describe(e) for e in events)
    assert "+    assert c_to_f(-10) == 14.0" in done.changes.diff and "+    return a + b" in done.changes.diff
    assert "-    assert add(2, 3) == 5" not in done.changes.diff
    ended = [(e.approach, e.moved, e.ended) for e in events if isinstance(e, RoundEnded)]
    assert ended == [("checks in test_calc.py (2 failing)", True, "better"), ("`add` in calc.py", True, "green")]
    prompt = scripted_llm.requests_for("repair_function")[0].messages[-1]["content"]
    assert "`add(2, 3)` must give `5`; the code gives `-1`." in prompt and "c_to_f(-10) == -14" not in prompt


async def test_the_next_round_is_told_the_failure_without_object_addresses(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # pytest shows `where True = <function is_odd at 0x7f...>(4)`: the address changes from run to run, so a
    # prompt that kept it would differ each time for the same failure (and tell the model nothing)
    project = write_project(tmp_path / "odd", {
        "odd.py": "def is_odd(n):\n    return n % 2 == 0\n",
        "test_odd.py": "from odd import is_odd\n\n\ndef test_is_odd():\n    assert is_odd(4) is False\n",
    })
    still_wrong = "```python\ndef is_odd(n):\n    return not (n % 2 != 0)\n```\n"
    right = "```python\ndef is_odd(n):\n    return n % 2 == 1\n```\n"
    scripted_llm.script(still_wrong, right, step="repair_function", repeat=False)
    settings = make_settings(project, loop=candidates({"candidates": 1, "small_edits": 0}))
    _, done = await collect(fix(FixRequest(project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    requests = scripted_llm.requests_for("repair_function")
    told = requests[1].messages[-1]["content"]
    assert "The tests then said:" in told and "is_odd(4)" in told, told
    assert " at 0x" not in told
