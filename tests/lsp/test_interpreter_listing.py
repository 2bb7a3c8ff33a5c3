"""Over stdio: the editor's interpreter listing, sent again when the user picks another interpreter, gives the next
run's sandbox the new interpreter's versions; a run already going keeps the listing it started with (real server,
real Docker sandbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EditorSide, initialize, open_client, server_env
from tests.support.scripted_llm import ScriptedLLM

pytestmark = [pytest.mark.docker, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]
SETTINGS = {"loop": {"maxIterations": 1}, "runTestsOnSave": False, "server": {"path": "ignored"}}
OLD, NEW = "/home/me/.venv-old/bin/python", "/home/me/.venv-new/bin/python"


def send_listing(client: LanguageClient, interpreter: str, six: str) -> None:
    client.protocol.notify("greenloop/interpreterPackages", {
        "interpreter": interpreter, "packages": [{"name": "six", "version": six}, {"name": "pip", "version": "24.0"}]})


def write_six_test(root: Path, version: str) -> None:
    (root / "test_six.py").write_text(f"import six\n\n\ndef test_version():\n    assert six.__version__ == '{version}'\n")


def fix_all(client: LanguageClient) -> Any:
    return client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}]))


def environment_of(editor: EditorSide, run_id: str) -> Any:
    found = [e.event for e in editor.loop_events if e.runId == run_id and e.kind == "environment"]
    assert len(found) == 1, [e.kind for e in editor.loop_events]
    return found[0]


async def test_a_newer_listing_is_the_next_runs_and_a_run_going_keeps_its_own(
        scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["six"]\n')
    write_six_test(root, "1.14.0")
    editor = EditorSide()
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), editor)
    try:
        await initialize(client, root, SETTINGS)
        send_listing(client, OLD, "1.14.0")
        first_run = asyncio.ensure_future(fix_all(client))
        for _ in range(600):  # the run has begun (its progress): its request is made, with the listing of then
            if client.progress_reports:
                break
            await asyncio.sleep(0.1)
        assert client.progress_reports, "the first run did not begin"
        send_listing(client, NEW, "1.15.0")  # the user picks another interpreter while the run goes
        first = await first_run
        write_six_test(root, "1.15.0")
        second = await fix_all(client)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert first["outcome"] == "already_green", first  # the run kept six 1.14.0, the listing it started with
    assert second["outcome"] == "already_green", second  # the next run has the new interpreter's six 1.15.0
    env_first, env_second = environment_of(editor, first["runId"]), environment_of(editor, second["runId"])
    assert env_first.packages == ["six==1.14.0"] and env_second.packages == ["six==1.15.0"]
    assert env_second.source == "the editor's interpreter"
    assert f"the editor's interpreter ({NEW}): 2 packages listed" in env_second.lines
    assert not any(OLD in line for line in env_second.lines)
    assert scripted_llm.requests == []


async def test_an_improve_run_gets_the_listing_too(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["six"]\n')
    (root / "ver.py").write_text("import six\n\n\ndef version():\n    return six.__version__\n")
    write_six_test(root, "1.14.0")
    editor = EditorSide()
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), editor)
    try:
        await initialize(client, root, SETTINGS)
        send_listing(client, OLD, "1.14.0")
        span = {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}}
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="greenloop.improve",
            arguments=[{"uri": (root / "ver.py").as_uri(), "range": span, "instruction": "add a docstring"}]))
    finally:
        await client.shutdown_session()
        await client.stop()
    environment = environment_of(editor, result["runId"])  # the model is not scripted: the run's end is no matter
    assert environment.packages == ["six==1.14.0"], environment
    assert f"the editor's interpreter ({OLD}): 2 packages listed" in environment.lines
