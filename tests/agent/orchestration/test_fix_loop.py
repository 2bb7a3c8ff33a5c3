"""The fix loop end to end: real sandbox (Docker engine), real HTTP to the scripted model."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import docker
import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import EditApplied, EditRejected, EnvironmentChanged, Message, TestsRan
from tests.agent.conftest import FIX_ADD, collect, kinds, plan, tree_bytes, write_project
from tests.support.scripted_llm import slow

pytestmark = pytest.mark.docker

@pytest.fixture
def make_settings(plan_strategy: Any) -> Any:
    """These tests are about the plan strategy (one JSON DebugPlan per iteration)."""
    return plan_strategy



async def test_seeded_bug_fixed_in_one_iteration_without_touching_files(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script("`add` returns a - b; it must return a + b.", step="diagnosis")
    scripted_llm.script(plan(FIX_ADD), step="debug_plan")
    before = tree_bytes(calc_project)
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project)))
    assert done.outcome == "green", done.summary
    assert done.iterations == 1
    assert [c.path for c in done.changes.files] == ["calc.py"]
    assert "+    return a + b" in done.changes.diff
    assert kinds(events)[:4] == ["run_started", "environment", "tests_ran", "iteration_started"]  # the step, no round
    assert {"locations", "diagnosis", "plan", "edit_applied", "budget"} <= set(kinds(events))
    assert tree_bytes(calc_project) == before  # without --apply nothing on disk changes
    # the plan request carried the failing test and the buggy line, and asked for the debug_plan schema
    plan_request = scripted_llm.requests_for("debug_plan")[0]
    prompt = "\n".join(m["content"] for m in plan_request.messages)
    assert "test_add" in prompt and "return a - b" in prompt
    assert prompt.count("## Failing tests") == 1  # the code context does not repeat them
    assert "## What the project is for" not in prompt  # a person's tests are the spec, not the model's
    # the diagnosis reaches the plan, which is asked to summarise it rather than copy it back
    assert "`add` returns a - b; it must return a + b." in prompt and "do not copy the text above" in prompt
    assert plan_request.response_format["json_schema"]["name"] == "debug_plan"
    assert done.prompt_tokens > 0 and done.completion_tokens > 0
    # both requests open with the same failures and code, so a server's prompt cache reuses that prefix
    diagnosis_request = scripted_llm.requests_for("diagnosis")[0]
    assert diagnosis_request.body["max_tokens"] == 512 < plan_request.body["max_tokens"]  # one paragraph
    asked = diagnosis_request.messages[-1]["content"]
    planned = plan_request.messages[-1]["content"]
    shared = asked[: next((i for i, (a, b) in enumerate(zip(asked, planned, strict=False)) if a != b), len(asked))]
    assert shared.startswith("The tests of") and "return a - b" in shared
    # the prompt shows no worked example: small models copied its file and names into their plans
    assert "geometry" not in prompt
    # nor does the schema (the 0.5B model installed its example `requests==2.32.3` into a slugify project)
    assert "requests" not in json.dumps(plan_request.response_format)


async def test_missing_package_fixed_by_install_action(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(
        tmp_path / "ws",
        {
            "dump.py": "import tomli_w\n\n\ndef dump(d):\n    return tomli_w.dumps(d)\n",
            "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
        },
    )
    scripted_llm.script(
        plan({"kind": "install", "packages": ["tomli-w==1.0.0"]}, diagnosis="tomli_w is not installed"),
        step="debug_plan",
    )
    settings = make_settings(ws, loop={"diagnosis": False}, sandbox={"allow_install": ["tomli-w"]})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    env = [e for e in events if isinstance(e, EnvironmentChanged)]
    assert env and env[0].ok and env[0].action == "install"
    assert [(i.name, i.version, i.origin) for i in env[0].installed] == [("tomli-w", "1.0.0", "consented")]
    assert done.changes.packages == ["tomli-w==1.0.0"]
    assert done.changes.files == []


async def test_installs_of_the_runner_or_the_projects_own_code_are_dropped_and_said(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 0.5B model's fix-loop plans asked for `pytest==1.2.0` (the test runner, downgraded) and
    # its own package; the first would break every later test run
    odd = {"kind": "install", "packages": ["pytest==1.2.0", "Calc", "json"]}
    scripted_llm.script(plan(odd, FIX_ADD), step="debug_plan")
    settings = make_settings(calc_project, backend="local", loop={"diagnosis": False})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert not [e for e in events if isinstance(e, EnvironmentChanged)]  # nothing was installed
    said = [e.text for e in events if isinstance(e, Message) and e.text.startswith("Not installed")]
    assert said and "pytest==1.2.0, Calc, json" in said[0]
    assert done.changes.packages == []


async def test_bad_search_is_sent_back_and_repaired(calc_project: Path, scripted_llm: Any, make_settings: Any) -> None:
    wrong = {"kind": "edit", "path": "calc.py", "search": "    return b - a  # nope", "replace": "    return a + b"}
    scripted_llm.script(plan(wrong), plan(FIX_ADD), step="debug_plan", repeat=False)
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, loop={"diagnosis": False})))
    assert done.outcome == "green"
    rejected = [e for e in events if isinstance(e, EditRejected)]
    assert len(rejected) == 1 and "not in the file" in rejected[0].reason
    second = scripted_llm.requests_for("debug_plan")[1]
    assert "did you mean" in second.messages[-1]["content"]
    assert "return a - b" in second.messages[-1]["content"]  # the current file is shown for the repair
    assert "from the test report" not in second.messages[-1]["content"]  # it was not copied from there


async def test_a_search_copied_from_the_report_is_answered_with_the_lines_it_is_about(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B searched for `-273.15 != 32`: pytest's view of the assertion, not its source
    from_report = {"kind": "edit", "path": "test_calc.py", "search": "assert -1 == 5", "replace": "assert 5 == 5"}
    scripted_llm.script(plan(from_report), plan(FIX_ADD), step="debug_plan", repeat=False)
    # tests writable (as in generation), so the search miss, not the test-file refusal, answers it
    settings = make_settings(calc_project, backend="local", loop={"diagnosis": False, "edit_tests": True})
    _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green"
    repair = scripted_llm.requests_for("debug_plan")[1].messages[-1]["content"]
    assert "That search text is from the test report, not from the file." in repair
    assert "test_calc.py:5|     assert add(2, 3) == 5" in repair


async def test_a_path_under_the_sandboxs_workspace_root_names_the_workspace_file(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B copied `/workspace/roman.py` from a traceback in the Docker sandbox, and
    # every repair of it was refused as an absolute path
    absolute = {**FIX_ADD, "path": "/workspace/calc.py"}
    scripted_llm.script(plan(absolute), step="debug_plan")
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, loop={"diagnosis": False})))
    assert done.outcome == "green", done.summary
    assert [e.path for e in events if isinstance(e, EditApplied)] == ["calc.py"]
    assert [c.path for c in done.changes.files] == ["calc.py"]


async def test_an_edit_that_changes_nothing_is_rejected_and_repaired(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B sent `replace` equal to `search`: reported "applied", the tests were not
    # even rerun, and the iteration's repair was never asked for
    same = {**FIX_ADD, "replace": FIX_ADD["search"]}
    unchanged_file = {"kind": "write", "path": "calc.py", "content": (calc_project / "calc.py").read_text()}
    scripted_llm.script(plan(same, unchanged_file), plan(FIX_ADD), step="debug_plan", repeat=False)
    settings = make_settings(calc_project, backend="local", loop={"diagnosis": False, "max_iterations": 1})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    rejected = [e for e in events if isinstance(e, EditRejected)]
    assert [e.reason.split(":")[0] for e in rejected] == ["that changes nothing"] * 2
    assert len([e for e in events if isinstance(e, EditApplied)]) == 1
    repair = scripted_llm.requests_for("debug_plan")[1].messages[-1]["content"]
    assert "the new text is the text already there" in repair


async def test_a_rejected_plan_sent_back_unchanged_ends_the_repairs(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B answered both repair requests with the rejected plan, word for word
    wrong = {"kind": "edit", "path": "calc.py", "search": "    return b - a  # nope", "replace": "    return a + b"}
    scripted_llm.script(plan(wrong), step="debug_plan")
    settings = make_settings(calc_project, loop={"diagnosis": False, "max_iterations": 1})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome != "green"
    assert len(scripted_llm.requests_for("debug_plan")) == 2  # the plan, one repair; not a second repair
    first, repair = (r.body["seed"] for r in scripted_llm.requests_for("debug_plan"))
    assert repair == first + 1  # the repair is sampled with the next seed
    assert len([e for e in events if isinstance(e, EditRejected)]) == 1
    assert any(isinstance(e, Message) and "sent the rejected actions back unchanged" in e.text for e in events)


@pytest.mark.parametrize(
    "heading",
    [
        # Qwen2.5-Coder 0.5B copied "### wordcount.py:3-15 count_words (function)" into its actions' paths,
        "calc.py:1-2 add (function)",
        # and a file:line with the failing line after it (the write was applied at 3cf3714)
        "calc.py:2: 'assert add(2, 3) == 5': ",
    ],
)
async def test_a_context_heading_used_as_a_path_names_its_file(
    calc_project: Path, scripted_llm: Any, make_settings: Any, heading: str
) -> None:
    overwrite = {"kind": "write", "path": heading, "content": "    return a + b"}
    scripted_llm.script(plan(overwrite), plan({**FIX_ADD, "path": heading}), step="debug_plan", repeat=False)
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, loop={"diagnosis": False})))
    assert done.outcome == "green", done.summary + done.evidence
    rejected = [e for e in events if isinstance(e, EditRejected)]
    assert len(rejected) == 1 and "not a file; the file is calc.py" in rejected[0].reason
    assert [c.path for c in done.changes.files] == ["calc.py"]  # no file named after the heading


async def test_a_change_that_removes_tests_is_undone(calc_project: Path, scripted_llm: Any, make_settings: Any) -> None:
    # Qwen2.5-Coder 0.5B rewrote a failing test file into one without tests; the loop then saw "0 failed"
    no_tests = {"kind": "write", "path": "test_calc.py", "content": "from calc import add\n"}
    scripted_llm.script(plan(no_tests), plan(FIX_ADD), step="debug_plan", repeat=False)
    # tests writable (generation's own tests are): the guard against removing tests still holds
    settings = make_settings(calc_project, loop={"diagnosis": False, "edit_tests": True})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert done.iterations == 2
    assert [c.path for c in done.changes.files] == ["calc.py"]  # the test file is as it was
    warned = [e.text for e in events if isinstance(e, Message) and e.level == "warning"]
    assert warned == ["Iteration 1's change was undone: fewer tests ran (2 -> 0); make the tests pass by fixing "
                      "the code, not by removing or disabling tests."]
    second = scripted_llm.requests_for("debug_plan")[1].messages[-1]["content"]
    assert "result: undone: fewer tests ran (2 -> 0)" in second
    assert "test_add" in second and "assert add(2, 3) == 5" in second  # the failure is still shown


async def test_a_run_that_ends_red_leaves_its_best_state_not_its_last(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B overwrote a 40-line test file with one `assert` in the last iteration: the
    # collection error was left to a next iteration that never came, and was the result offered
    ws = write_project(
        tmp_path / "ws",
        {
            "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
            "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_mul():\n    assert mul(2, 3) == 6\n",
        },
    )
    one_assert = {"kind": "write", "path": "test_calc.py", "content": "assert mul(2, 3) == 6\n"}
    scripted_llm.script(plan(FIX_ADD), plan(one_assert), step="debug_plan", repeat=False)
    settings = make_settings(ws, backend="local", loop={"edit_tests": True, "diagnosis": False, "max_iterations": 2})
    events, done = await collect(fix(FixRequest(ws), settings))

    assert [(e.passed, e.failed, e.errors) for e in events if isinstance(e, TestsRan)] == [(0, 2, 0), (1, 1, 0), (0, 0, 1)]
    assert done.outcome == "budget"
    assert done.summary.startswith("Stopped after 2 iterations; 1 passed, 1 failed")
    assert [(c.path, "a + b" in c.after) for c in done.changes.files] == [("calc.py", True)]  # test file as it was
    warned = [e.text for e in events if isinstance(e, Message) and e.level == "warning"]
    assert warned[-1].startswith("Kept the files as they were after iteration 1 (1 passed, 1 failed")
    assert (ws / "test_calc.py").read_text().startswith("from calc import")  # the person's files: untouched


async def test_a_test_file_that_no_longer_collects_is_not_a_better_state(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the first cell of the generate bench at 4673a95: 0 passed / 3 failed became 1 error (the
    # one-`assert` test file), and "fewest not passing" ranked that error state as the best one
    ws = write_project(
        tmp_path / "ws",
        {
            "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
            "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_mul():\n    assert mul(2, 3) == 6\n",
        },
    )
    one_assert = {"kind": "write", "path": "test_calc.py", "content": "assert mul(2, 3) == 6\n"}
    scripted_llm.script(plan(one_assert), step="debug_plan")
    settings = make_settings(ws, backend="local", loop={"edit_tests": True, "diagnosis": False, "max_iterations": 1})
    events, done = await collect(fix(FixRequest(ws), settings))

    assert [(e.passed, e.failed, e.errors) for e in events if isinstance(e, TestsRan)] == [(0, 2, 0), (0, 0, 1)]
    assert done.outcome == "budget" and "0 passed, 2 failed" in done.summary
    assert done.changes.files == []
    warned = [e.text for e in events if isinstance(e, Message) and e.level == "warning"]
    assert warned[-1].startswith("Kept the files as they were before any change (0 passed, 2 failed")


async def test_plan_writing_outside_the_workspace_is_refused(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    evil = {"kind": "write", "path": "../outside.py", "content": "print('pwned')\n"}
    scripted_llm.script(plan(evil), step="debug_plan")
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, loop={"diagnosis": False})))
    assert not (calc_project.parent / "outside.py").exists()
    rejected = [e for e in events if isinstance(e, EditRejected)]
    assert rejected and "escapes the workspace" in rejected[0].reason
    assert done.outcome == "stuck"
    assert done.changes.files == []


async def test_model_repeating_itself_is_stopped_as_stuck(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    useless = {"kind": "edit", "path": "calc.py", "search": "def mul(a, b):", "replace": "def mul(a, b):  # hm"}
    scripted_llm.script(plan(useless), step="debug_plan")
    settings = make_settings(calc_project, loop={"diagnosis": False, "max_iterations": 5})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "stuck"
    assert done.iterations == 2
    assert "same plan again" in done.evidence and "iteration 1" in done.evidence
    assert len([e for e in events if isinstance(e, EditApplied)]) == 1


async def test_cancel_mid_iteration_leaves_no_container(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    client = docker.from_env()
    label = {"label": f"greenloop.owner_pid={os.getpid()}"}  # this run's; the engine may be shared
    before = {c.id for c in client.containers.list(all=True, filters=label)}
    scripted_llm.script(slow(30, "thinking"), step="diagnosis")
    seen: list[str] = []

    async def consume() -> None:
        async for event in fix(FixRequest(calc_project), make_settings(calc_project)):
            seen.append(event.kind)

    task = asyncio.create_task(consume())
    for _ in range(600):
        if "locations" in seen:
            break
        await asyncio.sleep(0.1)
    assert "locations" in seen, seen
    during = {c.id for c in client.containers.list(all=True, filters=label)} - before
    assert during, "the run should have a container while it runs"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = {c.id for c in client.containers.list(all=True, filters=label)} - before
    assert after == set()
    assert "done" not in seen


async def test_closing_the_stream_mid_iteration_stops_the_run_before_aclose_returns(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    client = docker.from_env()
    label = {"label": f"greenloop.owner_pid={os.getpid()}"}  # this run's; the engine may be shared
    before = {c.id for c in client.containers.list(all=True, filters=label)}
    scripted_llm.script(slow(30, "thinking"), step="diagnosis")
    events = fix(FixRequest(calc_project), make_settings(calc_project))
    async with asyncio.timeout(120):
        async for event in events:
            if event.kind == "locations":
                break
        assert {c.id for c in client.containers.list(all=True, filters=label)} - before, "the run has a container"
        await events.aclose()  # type: ignore[attr-defined]
    after = {c.id for c in client.containers.list(all=True, filters=label)} - before
    assert after == set()  # gone when aclose returned, not later


@pytest.mark.parametrize(
    ("limits", "expect"),
    [
        ({"max_iterations": 2}, "max iterations"),
        ({"max_tokens": 1}, "token budget"),
        ({"max_seconds": 0.001}, "time budget"),
        ({"max_cost": 0.000001}, "cost budget"),
    ],
)
async def test_each_budget_stops_the_loop(
    calc_project: Path, scripted_llm: Any, make_settings: Any, limits: dict[str, Any], expect: str
) -> None:
    counter = {"n": 0}

    def different_useless_plan(_: dict[str, Any]) -> str:
        counter["n"] += 1
        return plan({"kind": "edit", "path": "calc.py", "search": "def mul(a, b):", "replace": "def mul(a, b):  # hm"
                     + str(counter["n"])}) if counter["n"] == 1 else plan(
            {"kind": "write", "path": f"note{counter['n']}.txt", "content": str(counter["n"])}
        )

    scripted_llm.script(different_useless_plan, step="debug_plan")
    settings = make_settings(
        calc_project,
        backend="local",
        loop={"diagnosis": False, **limits},
        llm={"model": "priced", "prices": {"priced": {"prompt": 1000.0, "completion": 1000.0}}},
    )
    _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "budget", done.summary
    assert expect in done.evidence


async def test_already_green_and_no_tests_change_nothing(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    green = write_project(tmp_path / "green", {"m.py": "X = 1\n", "test_m.py": "from m import X\n\ndef test_x():\n    assert X == 1\n"})
    _, done = await collect(fix(FixRequest(green), make_settings(green, backend="local")))
    assert done.outcome == "already_green" and done.changes.files == []
    empty = write_project(tmp_path / "empty", {"m.py": "X = 1\n", "pyproject.toml": "[project]\nname='m'\n"})
    _, done = await collect(fix(FixRequest(empty), make_settings(empty, backend="local")))
    assert done.outcome == "no_tests" and "No tests" in done.summary
    assert scripted_llm.requests == []  # no model call was needed for either


async def test_model_that_never_returns_valid_json_ends_with_error(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script("I think you should change the plus sign.", step="debug_plan")
    before = tree_bytes(calc_project)
    _, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, backend="local",
                                                                       loop={"diagnosis": False})))
    assert done.outcome == "error"
    assert "valid plan" in done.summary
    assert tree_bytes(calc_project) == before


def test_plan_json_is_the_public_contract() -> None:
    from greenloop.agent.plan import DebugPlan

    schema = DebugPlan.model_json_schema()
    kinds_ = {json.dumps(v["properties"]["kind"]) for v in schema["$defs"].values()}
    assert len(kinds_) == 4
    DebugPlan.model_validate_json(plan(FIX_ADD, {"kind": "install", "packages": ["x"]}, {"kind": "run", "command": "true"},
                                       {"kind": "write", "path": "a", "content": ""}))
