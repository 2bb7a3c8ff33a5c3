"""Over stdio: a run whose tests cannot run in the sandbox ends with outcome "environment" and a diagnostic on the
file and line of the cause, with no model request (real server, real Docker sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import EditorSide, initialize, open_client, server_env
from tests.support.scripted_llm import ScriptedLLM

pytestmark = [pytest.mark.docker, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]
SETTINGS = {"loop": {"maxIterations": 1}, "runTestsOnSave": False, "server": {"path": "ignored"}}


async def test_a_removed_stdlib_name_is_an_environment_result_and_a_diagnostic(
        scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "sig.py").write_text("import inspect\n\n\ndef arity(f):\n    return len(inspect.getargspec(f).args)\n")
    (root / "test_sig.py").write_text("from sig import arity\n\n\ndef test_arity():\n    assert arity(lambda a: a) == 1\n")
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), EditorSide())
    try:
        await initialize(client, root, SETTINGS)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}]))
    finally:
        await client.shutdown_session()
        await client.stop()
    assert result["outcome"] == "environment", result
    assert "removed api at sig.py:5" in result["summary"]
    found = client.diagnostics[(root / "sig.py").as_uri()]
    assert [d.range.start.line for d in found] == [4]
    assert "getargspec" in found[0].message and "project.image" in found[0].message
    assert scripted_llm.requests == []


async def test_the_editors_interpreter_listing_reaches_the_sandbox(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["six"]\n')
    (root / "test_six.py").write_text("import six\n\n\ndef test_version():\n    assert six.__version__ == '1.14.0'\n")
    client = await open_client(server_env(scripted_llm, tmp_path, "docker"), EditorSide())
    try:
        await initialize(client, root, SETTINGS)
        client.protocol.notify("greenloop/interpreterPackages", {
            "interpreter": "/home/me/.venv/bin/python",
            "packages": [{"name": "six", "version": "1.14.0"}, {"name": "numpy", "version": "1.26.4"}]})
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}]))
    finally:
        await client.shutdown_session()
        await client.stop()
    assert result["outcome"] == "already_green", result  # six 1.14.0, not the newest the declared range allows
    assert scripted_llm.requests == []
