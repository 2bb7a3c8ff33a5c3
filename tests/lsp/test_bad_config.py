"""Over stdio: a broken greenloop.toml is an error that names the key, file and line; the daemon keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.conftest import copy_project, initialize

RUN_TESTS = types.ExecuteCommandParams(command="greenloop.runTests", arguments=[{}])


async def test_a_bad_config_file_is_named_and_the_server_survives_it(
    local_client: LanguageClient, tmp_path: Path
) -> None:
    root = copy_project("python-pass", tmp_path)
    await initialize(local_client, root)
    config = root / "greenloop.toml"
    config.write_text('[llm]\nmodle = "typo"\n\n[llm.prices."gpt-4o"]\nprompt = "cheap"\n')
    with pytest.raises(JsonRpcException) as caught:
        await local_client.workspace_execute_command_async(RUN_TESTS)
    assert f"{config}:2: llm.modle: unknown key" in caught.value.message
    assert f"{config}:5: llm.prices.gpt-4o.prompt" in caught.value.message
    config.write_text('[llm.prices."gpt-4o"]\nprompt = 2.5\ncompletion = 10\n')
    result = await local_client.workspace_execute_command_async(RUN_TESTS)
    assert result["failed"] == 0 and result["passed"] > 0
