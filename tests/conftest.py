"""Root fixtures shared by every area's tests: the scripted model server and settings that use it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from greenloop.llm import LLMClient, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import ScriptedLLM

# Sample projects that tests run inside sandboxes; their own tests are not ours to collect.
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture(autouse=True)
def no_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user-level config file (platformdirs, XDG_CONFIG_HOME) of whoever runs the tests is not read."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


@pytest.fixture(autouse=True)
def no_discovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test finds a real Ollama / LM Studio on this machine: discovery probes only the URLs a test lists
    (an environment variable, so `greenloop` subprocesses inherit it; explicit settings still win)."""
    monkeypatch.setenv("GREENLOOP_LOCAL_MODEL__DISCOVER_URLS", "[]")


@pytest.fixture(autouse=True)
def model_rounds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests of the loop check what it does with the scripted model's replies, so the small edits tried
    before any model is asked (`loop.small_edits`, repair/small_edit_candidates.py) are
    off unless a test's settings turn them on (an environment variable: `greenloop` subprocesses and the LSP
    server inherit it)."""
    monkeypatch.setenv("GREENLOOP_LOOP__SMALL_EDITS", "0")


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/support/scripted_llm.py)."""
    server = ScriptedLLM().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def scripted_settings(scripted_llm: ScriptedLLM) -> Settings:
    """Settings whose endpoint is `scripted_llm`: fast retry backoff, no embedded model."""
    return Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted",
             "backoff": 0.01, "backoff_max": 0.2, "timeout": 20},
        local_model={"enabled": False},
    )


@pytest.fixture
async def llm_client(scripted_settings: Settings) -> AsyncIterator[LLMClient]:
    """An `LLMClient` talking to `scripted_llm`."""
    async with open_llm(scripted_settings) as client:
        yield client
