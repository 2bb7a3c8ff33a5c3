"""Over stdio: a fix run with progress and a reviewable edit, cancel, feedback, one loop at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import docker
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    FIX_SUB,
    EditorSide,
    copy_project,
    initialize,
    open_client,
    plan,
    server_env,
)
from tests.support.scripted_llm import ScriptedLLM, slow

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

SETTINGS = {"loop": {"maxIterations": 2}, "runTestsOnSave": False, "server": {"path": "ignored"}}


def function_fixes(request: dict[str, Any]) -> str:
    """The scripted model's corrected function for whichever of `sub` and `div` a round asks about."""
    asked = request["messages"][-1]["content"]
    if "`sub`" in asked:
        return "It adds.\n```python\ndef sub(a, b):\n    return a - b\n```"
    return "It divides by zero.\n```python\ndef div(a, b):\n    return a / b if b else 0\n```"


def fix_all(client: LanguageClient) -> Any:
    params = types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}])
    return client.workspace_execute_command_async(params)


def progress_kinds(client: LanguageClient) -> list[list[str]]:
    return [[getattr(v, "kind", "?") for v in values] for values in client.progress_reports.values()]


async def wait_for(condition: Any, seconds: float = 60.0) -> None:
    for _ in range(int(seconds * 10)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not met in time")


async def test_fix_all_reports_progress_and_sends_an_edit_to_review(
    local_client: LanguageClient, editor: EditorSide, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    root = copy_project("python-fail", tmp_path)
    # the default loop: each round asks for the failing function again, as code
    scripted_llm.script(function_fixes, step="repair_function")
    await initialize(local_client, root, SETTINGS)
    before = (root / "calc.py").read_text()
    await local_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="greenloop.runTests", arguments=[{}])
    )
    assert local_client.diagnostics[(root / "tests/test_calc.py").as_uri()]

    result = await fix_all(local_client)
    assert result["outcome"] == "green", result
    assert result["applied"] is True and result["runId"]
    # progress: begin, reports, end (one server-created token)
    assert len(local_client.progress_reports) == 1
    kinds = progress_kinds(local_client)[0]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    begin = next(iter(local_client.progress_reports.values()))[0]
    assert begin.cancellable is True
    reports = [v.message for v in next(iter(local_client.progress_reports.values())) if v.kind == "report"]
    assert any(m and m.startswith("iteration 1/2") for m in reports), reports
    # the edit: documentChanges, every edit annotated with an annotation that needs confirmation
    assert len(editor.edits) == 1
    edit = editor.edits[0].edit
    assert edit.change_annotations and all(a.needs_confirmation for a in edit.change_annotations.values())
    assert edit.document_changes
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == (root / "calc.py").as_uri()
        assert all(getattr(e, "annotation_id", None) in edit.change_annotations for e in change.edits)
    # the client applied it; the files now pass and the diagnostics are gone
    assert (root / "calc.py").read_text() != before
    assert list(local_client.diagnostics[(root / "tests/test_calc.py").as_uri()]) == []
    again = await local_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="greenloop.runTests", arguments=[{}])
    )
    assert (again["failed"], again["errors"]) == (0, 0)
    # loop events went out, typed; diagnosis deltas were not forwarded
    kinds_seen = [e.kind for e in editor.loop_events]
    assert kinds_seen[0] == "run_started" and kinds_seen[-1] == "done"
    assert {"tests_ran", "candidate_asked", "candidate_tested", "round_ended"} <= set(kinds_seen)
    assert all(e.runId == result["runId"] for e in editor.loop_events)
    # the verdict question was asked, answered "Works", and stored with the run
    await wait_for(lambda: editor.questions)
    assert [a.title for a in editor.questions[0].actions or []] == [
        "Perfect", "Works", "Runs, not right", "Didn't run", "Skip",
    ]  # fmt: skip
    runs: Any = None

    async def verdict_stored() -> bool:
        nonlocal runs
        runs = await local_client.protocol.send_request_async("greenloop/runs", {"limit": 5})
        return bool(runs.runs)

    for _ in range(50):
        if await verdict_stored():
            break
        await asyncio.sleep(0.1)
    assert runs.runs[0].id == result["runId"] and runs.runs[0].outcome == "green"
    from greenloop.run_records import RunStore

    store = RunStore.open(tmp_path / "runs.sqlite3")
    try:
        await wait_for(lambda: store.list_runs(1)[0].verdict is not None, 10)
        assert store.list_runs(1)[0].verdict == "works"
    finally:
        store.close()


async def test_declined_feedback_and_a_second_loop_is_refused(
    local_client: LanguageClient, editor: EditorSide, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    root = copy_project("python-pass", tmp_path)
    calc = root / "calc.py"
    text = calc.read_text()
    assert "def add(a, b):\n    return a + b\n" in text
    documented = {
        "kind": "edit",
        "path": "calc.py",
        "search": "def add(a, b):\n    return a + b",
        "replace": 'def add(a, b):\n    """Sum of a and b."""\n    return a + b',
    }
    scripted_llm.script(slow(1.5, "add has no docstring."), step="diagnosis")
    scripted_llm.script(plan(documented, diagnosis="add needs a docstring"), step="debug_plan")
    editor.apply = False  # the person rejects the edit in the preview
    await initialize(local_client, root, SETTINGS)
    line = text.splitlines().index("def add(a, b):")
    params = {
        "uri": calc.as_uri(),
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}},
        "text": "add a docstring",
        "threadId": "thread-1",
    }
    feedback = asyncio.ensure_future(local_client.protocol.send_request_async("greenloop/feedback", params))
    await wait_for(lambda: local_client.progress_reports, 30)
    with pytest.raises(JsonRpcException) as caught:
        await fix_all(local_client)
    assert caught.value.code == -32600
    assert caught.value.message == "greenloop is already running a loop; cancel it first or wait"
    answer = await feedback
    assert answer.threadId == "thread-1"
    assert answer.status == "declined", answer
    assert answer.edit is not None
    assert calc.read_text() == text  # declined: untouched
    assert len(editor.edits) == 1
    sent = editor.edits[0].edit.document_changes[0]
    assert sent.edits[0].new_text.strip() == '"""Sum of a and b."""'


@pytest.mark.docker
async def test_cancel_stops_the_loop_and_leaves_no_container(
    scripted_llm: ScriptedLLM, tmp_path: Path, editor: EditorSide
) -> None:
    root = copy_project("python-fail", tmp_path)
    scripted_llm.script(slow(60, "never arrives in time"), step="repair_function")
    scripted_llm.script(plan(FIX_SUB), step="debug_plan")
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), editor)
    engine = docker.from_env()
    try:
        await initialize(client, root, SETTINGS)
        assert client._server is not None
        mine = {"label": ["greenloop.sandbox=1", f"greenloop.owner_pid={client._server.pid}"]}
        run = asyncio.ensure_future(fix_all(client))
        # the loop is inside the (slow) model call, with its container up
        await wait_for(
            lambda: any(r.messages if False else True for r in scripted_llm.requests_for("repair_function"))
        )
        assert engine.containers.list(filters=mine), "the loop's container should be running"
        token = next(iter(client.progress_reports))
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(run, 60)
        assert result["outcome"] == "cancelled" and result["applied"] is False
        assert client.progress_reports[token][-1].kind == "end"
        assert engine.containers.list(all=True, filters=mine) == []
        assert editor.loop_events[-1].kind == "done" and editor.loop_events[-1].outcome == "cancelled"
        assert editor.questions == []  # no verdict question for a cancelled run
        # the server still works
        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="greenloop.cancel", arguments=[{}])
        )
        assert status == {"cancelled": 0}
    finally:
        await client.shutdown_session()
        await client.stop()
        engine.close()


@pytest.mark.docker
async def test_client_vanishing_mid_loop_cleans_up(
    scripted_llm: ScriptedLLM, tmp_path: Path, editor: EditorSide
) -> None:
    root = copy_project("python-fail", tmp_path)
    scripted_llm.script(slow(60, "never arrives"), step="repair_function")
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), editor)
    engine = docker.from_env()
    try:
        await initialize(client, root, SETTINGS)
        server = client._server
        assert server is not None and server.stdin is not None
        mine = {"label": ["greenloop.sandbox=1", f"greenloop.owner_pid={server.pid}"]}
        pending = asyncio.ensure_future(fix_all(client))
        await wait_for(lambda: bool(scripted_llm.requests_for("repair_function")))
        assert engine.containers.list(filters=mine)
        server.stdin.close()  # the editor is gone: no exit, no shutdown
        code = await asyncio.wait_for(server.wait(), 60)
        assert code is not None
        assert engine.containers.list(all=True, filters=mine) == []
        with pytest.raises(Exception):  # noqa: B017 (the request dies with the server; how is pygls' business)
            await asyncio.wait_for(pending, 5)
    finally:
        await client.stop()
        engine.close()
