"""Fixtures for driving `greenloop serve` over stdio with pytest-lsp, as VS Code would."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.workspace_edits import apply_workspace_edit
from tests.support.scripted_llm import ScriptedLLM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"


@dataclass
class EditorSide:
    """What the test client (the 'editor') saw and how it answers the server's requests."""

    apply: bool = True  # answer applyEdit with applied=true (and write the edit to disk)
    verdict: str | None = "Works"  # the button clicked on the verdict question (None: dismissed)
    install: str | None = "Don't install"  # the button clicked when asked to install an undeclared package
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    questions: list[types.ShowMessageRequestParams] = field(default_factory=list)
    loop_events: list[Any] = field(default_factory=list)


def copy_project(name: str, tmp_path: Path) -> Path:
    """A private copy of a sample project (the fixtures themselves are never touched)."""
    target = tmp_path / "ws"
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns(".benchmarks", "__pycache__"))
    return target


def server_env(llm: ScriptedLLM, tmp_path: Path, backend: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GREENLOOP_", "OPENAI_"))}
    env.update(
        GREENLOOP_LLM__BASE_URL=llm.base_url,
        GREENLOOP_LLM__API_KEY="test-key",
        GREENLOOP_LLM__MAX_RETRIES="0",
        GREENLOOP_LOCAL_MODEL__ENABLED="false",
        GREENLOOP_SANDBOX__BACKEND=backend,
        GREENLOOP_RUNS__STORE=str(tmp_path / "runs.sqlite3"),
    )
    return env


async def open_client(env: dict[str, str], editor: EditorSide) -> LanguageClient:
    config = ClientServerConfig(server_command=[sys.executable, "-m", "greenloop", "serve"], server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    fix_code_action_reading(client)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        editor.edits.append(params)
        if editor.apply:
            apply_workspace_edit(params.edit)
        return types.ApplyWorkspaceEditResult(applied=editor.apply)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        editor.questions.append(params)
        title = editor.install if params.message.startswith("greenloop: install") else editor.verdict
        return types.MessageActionItem(title=title) if title else None

    @client.feature("greenloop/loopEvent")
    def loop_event(params: Any) -> None:
        editor.loop_events.append(params)

    return client


def fix_code_action_reading(client: LanguageClient) -> None:
    """lsprotocol reads any code action that has a `command` as a bare Command (its client-side
    hook checks for the key, not for a string); tell them apart the way the spec does."""
    converter = client.protocol._converter

    def read(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], read)  # noqa: UP007 (the key lsprotocol uses)


async def initialize(client: LanguageClient, root: Path, settings: dict[str, Any] | None = None) -> None:
    client.set_configuration({"greenloop": settings or {}})
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )


@pytest.fixture
def editor() -> EditorSide:
    return EditorSide()


@pytest.fixture
async def local_client(
    scripted_llm: ScriptedLLM, tmp_path: Path, editor: EditorSide
) -> AsyncIterator[LanguageClient]:
    """The server with the local sandbox backend (fast)."""
    client = await open_client(server_env(scripted_llm, tmp_path, "local"), editor)
    yield client
    await client.shutdown_session()
    await client.stop()


def plan(*actions: dict[str, Any], diagnosis: str = "sub adds instead of subtracting") -> str:
    return json.dumps({"diagnosis": diagnosis, "actions": list(actions)})


FIX_SUB = {
    "kind": "edit",
    "path": "calc.py",
    "search": "    return a + b  # bug: should subtract",
    "replace": "    return a - b",
}
FIX_DIV = {
    "kind": "edit",
    "path": "calc.py",
    "search": "def div(a, b):\n    return a / b",
    "replace": "def div(a, b):\n    return a / b if b else 0",
}
