"""Endpoint resolution: settings, then OPENAI_BASE_URL / OPENAI_API_KEY, then the embedded model."""

from __future__ import annotations

import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import open_llm, resolve_endpoint
from greenloop.settings import Settings
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_settings_win_over_the_sdk_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    endpoint = resolve_endpoint(Settings(llm={"base_url": "http://set.invalid/v1", "api_key": "set-key"}))
    assert (endpoint.base_url, endpoint.api_key, endpoint.source) == (
        "http://set.invalid/v1", "set-key", "llm.base_url")


def test_sdk_environment_is_used_when_settings_are_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    endpoint = resolve_endpoint(Settings())
    assert (endpoint.base_url, endpoint.api_key, endpoint.source) == (
        "http://env.invalid/v1", "env-key", "OPENAI_BASE_URL")


def test_nothing_configured_means_the_embedded_model_or_a_clear_error() -> None:
    assert resolve_endpoint(Settings()).source == "embedded"
    assert resolve_endpoint(Settings(local_model={"enabled": False})).source == "none"


async def test_open_llm_without_any_endpoint_says_how_to_configure_one() -> None:
    with pytest.raises(GreenloopError, match=r"llm.base_url .* OPENAI_BASE_URL"):
        async with open_llm(Settings(local_model={"enabled": False})):
            pass


async def test_open_llm_uses_openai_base_url_and_key(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    scripted_llm.script("hi there", step="a")
    async with open_llm(Settings(local_model={"enabled": False})) as llm:
        assert await llm.complete([{"role": "user", "content": "hi"}], step="a") == "hi there"
    assert scripted_llm.requests[0].headers["authorization"] == "Bearer from-env"


def test_api_key_never_appears_in_settings_output() -> None:
    settings = Settings(llm={"api_key": "sk-very-secret"})
    assert "sk-very-secret" not in repr(settings)
    assert "sk-very-secret" not in settings.model_dump_json()
