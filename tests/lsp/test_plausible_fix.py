"""A fix whose shape overfits (risk.py) is labelled "plausible" in the CLI, its JSON and the editor's result and diff view."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types

from greenloop.cli import main
from tests.lsp.conftest import EditorSide, initialize, open_client, server_env
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(240)

TITLE = "def title(page):\n    if page.heading:\n        return page.heading\n    return 'untitled'\n"
TEST = ("from pages import title\n\n\nclass Page:\n    pass\n\n\ndef test_heading():\n    page = Page()\n"
        "    page.heading = 'Home'\n    assert title(page) == 'Home'\n\n\n"
        "def test_no_heading_is_untitled():\n    assert title(Page()) == 'untitled'\n")
WRONG = "```python\ndef title(page):\n    return 'untitled'\n```\n"  # the second look's reply: red
LABEL = "plausible: the tests pass, check the change (reads an attribute that may be missing as None)"


def project(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pages.py").write_text(TITLE)
    (ws / "test_pages.py").write_text(TEST)
    return ws


@pytest.fixture(autouse=True)
def small_edits_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREENLOOP_LOOP__SMALL_EDITS", "60")
    monkeypatch.setenv("GREENLOOP_RUNS__ENABLED", "false")


def test_the_cli_and_its_json_say_the_fix_is_only_plausible(
    tmp_path: Path, scripted_llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_llm.script(WRONG)
    ws = project(tmp_path)
    argv = ["fix", str(ws), "--sandbox", "local", "--max-iterations", "1", "--base-url", scripted_llm.base_url]
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    changes = payload["changes"]
    assert (changes["kind"], changes["risk"]) == ("attribute default", "plausible")
    assert changes["risk_reason"] == "reads an attribute that may be missing as None"
    assert changes["reason"].startswith("the only green change")
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert LABEL in out and "change: attribute default" in out
    assert (ws / "pages.py").read_text() == TITLE  # nothing written without --apply


async def test_the_editor_is_told_in_the_result_and_the_diff_view(tmp_path: Path, scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(WRONG)
    ws = project(tmp_path)
    editor = EditorSide(apply=False, verdict=None)
    env = server_env(scripted_llm, tmp_path, "local") | {"GREENLOOP_LOOP__SMALL_EDITS": os.environ["GREENLOOP_LOOP__SMALL_EDITS"]}
    client = await open_client(env, editor)
    try:
        await initialize(client, ws, {"loop": {"maxIterations": 1}, "runTestsOnSave": False})
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}]))
        assert result["outcome"] == "green", result
        assert LABEL in result["summary"]
        [offered] = editor.edits
        assert offered.label is not None and offered.label.startswith("greenloop (plausible")
        [annotation] = (offered.edit.change_annotations or {}).values()
        assert annotation.description is not None and annotation.description.startswith(LABEL)
    finally:
        await client.shutdown_session()
        await client.stop()
