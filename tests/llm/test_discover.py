"""Discovery of a model server already running here (Ollama, LM Studio), against real HTTP servers.

A scripted server stands in for Ollama through `local_model.discover_urls`; the conftest pins
the URLs to [] for every other test, so no test finds a real server on this machine.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import open_llm
from greenloop.llm.doctor import checks
from greenloop.llm.endpoint import find_endpoint
from greenloop.settings import Settings
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ollama() -> Iterator[ScriptedLLM]:
    """A scripted server that answers /v1/models as Ollama does (owned_by "library")."""
    server = ScriptedLLM(models=("llama3.2:3b", "qwen2.5-coder:1.5b", "phi4")).start()
    server.owned_by = "library"
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def dead_url() -> str:
    """A 127.0.0.1 port with nothing listening."""
    server = ScriptedLLM().start()
    url = server.base_url
    server.stop()
    return url


@pytest.fixture
def hanging_url() -> Iterator[str]:
    """A socket that accepts connections (the kernel's backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        sock.close()


def local(*urls: str, **llm: object) -> Settings:
    return Settings(llm=llm, local_model={"discover_urls": list(urls)})


async def test_a_running_server_is_found_and_its_code_model_chosen(ollama: ScriptedLLM, dead_url: str) -> None:
    endpoint = await find_endpoint(local(dead_url, ollama.base_url))
    assert endpoint.base_url == ollama.base_url
    assert endpoint.source == f"discovered: Ollama at {ollama.base_url}"
    assert endpoint.model == "qwen2.5-coder:1.5b" and "code model" in endpoint.why
    assert [p.usable for p in endpoint.probes] == [False, True]
    assert endpoint.probes[0].note == "nothing listening"


async def test_llm_model_wins_when_listed_else_the_first(ollama: ScriptedLLM) -> None:
    endpoint = await find_endpoint(local(ollama.base_url, model="phi4"))
    assert (endpoint.model, endpoint.why) == ("phi4", "llm.model is served there")
    ollama.models = ["llama3.2:3b", "phi4"]
    endpoint = await find_endpoint(local(ollama.base_url))
    assert endpoint.model == "llama3.2:3b" and "first listed" in endpoint.why


async def test_the_server_is_named_by_port_when_its_reply_does_not_say(ollama: ScriptedLLM) -> None:
    ollama.owned_by = "organization_owner"
    endpoint = await find_endpoint(local(ollama.base_url))
    assert endpoint.source == f"discovered: server at {ollama.base_url}"


async def test_open_llm_talks_to_the_discovered_model_without_the_api_key(
    ollama: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-the-hosted-one")
    ollama.script("hi", step="a")
    async with open_llm(local(ollama.base_url)) as llm:
        assert await llm.complete([{"role": "user", "content": "hi"}], step="a") == "hi"
    (request,) = ollama.requests
    assert request.body["model"] == "qwen2.5-coder:1.5b"
    assert "sk-for-the-hosted-one" not in request.headers.get("authorization", "")


async def test_a_configured_endpoint_wins_and_nothing_is_probed(
    ollama: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = await find_endpoint(local(ollama.base_url, base_url="http://set.invalid/v1"))
    assert (endpoint.source, endpoint.probes, endpoint.model) == ("llm.base_url", (), None)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")
    endpoint = await find_endpoint(local(ollama.base_url))
    assert (endpoint.source, endpoint.probes) == ("OPENAI_BASE_URL", ())


async def test_discover_off_skips_the_probes(ollama: ScriptedLLM) -> None:
    settings = Settings(local_model={"discover": False, "discover_urls": [ollama.base_url]})
    endpoint = await find_endpoint(settings)
    assert (endpoint.source, endpoint.base_url, endpoint.probes) == ("embedded", None, ())


async def test_a_hanging_server_costs_at_most_the_timeout(ollama: ScriptedLLM, hanging_url: str) -> None:
    started = time.perf_counter()
    endpoint = await find_endpoint(local(hanging_url, ollama.base_url))
    elapsed = time.perf_counter() - started
    assert elapsed < 1.5  # 0.5 s probe, all at once; slack for a busy CI machine
    assert endpoint.base_url == ollama.base_url
    assert endpoint.probes[0].note == "no answer in 0.5s" and endpoint.probes[0].seconds < 1.0


async def test_a_server_answering_garbage_is_skipped_with_a_note(ollama: ScriptedLLM) -> None:
    broken = ScriptedLLM().start()
    empty = ScriptedLLM(models=()).start()
    try:
        broken.models_raw = b"<html>It works!</html>"
        endpoint = await find_endpoint(local(broken.base_url, empty.base_url, ollama.base_url))
    finally:
        broken.stop()
        empty.stop()
    assert endpoint.base_url == ollama.base_url
    assert [p.note for p in endpoint.probes[:2]] == [
        "answered, but not with an OpenAI model list", "answered, but lists no model"]


async def test_nothing_found_falls_back_to_the_embedded_model_or_the_error(dead_url: str) -> None:
    endpoint = await find_endpoint(local(dead_url))
    assert (endpoint.source, len(endpoint.probes)) == ("embedded", 1)
    off = Settings(local_model={"enabled": False, "discover_urls": [dead_url]})
    with pytest.raises(GreenloopError, match="no local model server was found"):
        async with open_llm(off):
            pass


def test_doctor_says_which_server_and_model_and_why(ollama: ScriptedLLM, dead_url: str) -> None:
    ollama.script("OK", step="doctor")
    rows = checks(local(dead_url, ollama.base_url))
    assert [(r.name, r.ok) for r in rows] == [
        ("model endpoint", True), ("local servers", True), ("model", True), ("model answers", True)]
    assert f"discovered: Ollama at {ollama.base_url}" in rows[0].detail
    assert "'qwen2.5-coder:1.5b'" in rows[0].detail and "code model" in rows[0].detail
    assert f"server at {dead_url}: nothing listening" in rows[1].detail
    assert "qwen2.5-coder:1.5b" in rows[1].detail
    assert "'qwen2.5-coder:1.5b' is served" in rows[2].detail


def test_doctor_with_nothing_found_lists_the_probes_and_uses_the_embedded_model(dead_url: str) -> None:
    rows = checks(Settings(local_model={"discover_urls": [dead_url], "enabled": False}))
    assert [(r.name, r.ok) for r in rows] == [("model endpoint", False), ("local servers", True)]
    assert "nothing listening" in rows[1].detail


def test_defaults_probe_only_ollama_and_lm_studio_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GREENLOOP_LOCAL_MODEL__DISCOVER_URLS")
    settings = Settings()
    assert settings.local_model.discover
    assert settings.local_model.discover_urls == ["http://127.0.0.1:11434/v1", "http://127.0.0.1:1234/v1"]
