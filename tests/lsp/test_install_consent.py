"""Over stdio: the editor is asked before a package nobody declared is installed, and its answer holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import EditorSide, initialize, open_client, server_env
from tests.support.package_index import PackageIndex, extra_index, unique_name
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")
SETTINGS = {"loop": {"maxIterations": 1, "smallEdits": 0}, "runTestsOnSave": False, "server": {"path": "ignored"}}


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    with extra_index(monkeypatch) as served:
        yield served


def project(root: Path, module: str) -> Path:
    root.mkdir()
    (root / "use.py").write_text(f"import {module}\n\n\ndef value():\n    return {module}.VALUE\n")
    (root / "test_use.py").write_text("from use import value\n\n\ndef test_value():\n    assert value() == 42\n")
    return root


@pytest.mark.parametrize("answer", ["Install", "Don't install"])
async def test_the_editor_is_asked_and_its_answer_decides(
    answer: str, index: PackageIndex, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    name = unique_name()
    module = index.add_wheel(name, "1.0")
    marker = tmp_path / "ran" / "marker"
    index.add_sdist(unique_name(), "1.0", marker)  # never asked for: only the wheel's name is missing
    root = project(tmp_path / "ws", module)
    editor = EditorSide(install=answer)
    client = await open_client(server_env(scripted_llm, tmp_path, "local"), editor)
    try:
        await initialize(client, root, SETTINGS)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="greenloop.fixFailingTests", arguments=[{}]))
    finally:
        await client.shutdown_session()
        await client.stop()
    asked = [q for q in editor.questions if q.message.startswith("greenloop: install")]
    assert [q.message for q in asked] == [f"greenloop: install `{module}`, which this project does not declare?"]
    assert [a.title for a in asked[0].actions or []] == ["Install", "Don't install"]
    if answer == "Install":
        assert result["outcome"] == "green", result
    else:
        assert result["outcome"] != "green", result
    assert not marker.exists()
