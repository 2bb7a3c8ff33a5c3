"""`greenloop doctor`'s model rows against a real (scripted) server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from greenloop.llm.doctor import checks
from greenloop.settings import Settings
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_working_endpoint_passes_every_row(scripted_llm: ScriptedLLM, scripted_settings: Settings) -> None:
    scripted_llm.script("OK", step="doctor")
    rows = checks(scripted_settings)
    assert [(r.name, r.ok) for r in rows] == [("model endpoint", True), ("model", True), ("model answers", True)]
    assert scripted_llm.base_url in rows[0].detail and "API key set" in rows[0].detail
    assert "'OK'" in rows[2].detail


def test_an_unknown_model_is_reported_with_the_served_ones(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    settings = Settings(llm={**scripted_settings.llm.model_dump(), "api_key": "k", "model": "gpt-9"},
                        local_model={"enabled": False})
    rows = checks(settings)
    assert (rows[-1].name, rows[-1].ok) == ("model", False)
    assert "local, scripted" in rows[-1].detail and "llm.model" in rows[-1].fix
    assert scripted_llm.requests == []  # no completion is tried when the model is wrong


def test_an_unreachable_endpoint_says_so() -> None:
    dead = ScriptedLLM().start()
    url = dead.base_url
    dead.stop()
    rows = checks(Settings(llm={"base_url": url}, local_model={"enabled": False}))
    assert [(r.name, r.ok) for r in rows] == [("model endpoint", True), ("model", False)]
    assert "cannot reach" in rows[1].detail


def test_no_endpoint_and_no_embedded_model_tells_how_to_configure_one() -> None:
    (row,) = checks(Settings(local_model={"enabled": False}))
    assert not row.ok and "OPENAI_BASE_URL" in row.fix


def test_embedded_model_rows_report_the_cached_file(tmp_path: object) -> None:
    settings = Settings(local_model={"cache_dir": str(tmp_path)})
    rows = checks(settings)
    assert rows[0].ok and "embedded" in rows[0].detail
    model_row = next(r for r in rows if r.name == "model file")
    assert not model_row.ok and model_row.fix == "greenloop model fetch"


def test_the_model_server_row_says_which_server_runs_and_why(tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    settings = Settings(local_model={"cache_dir": str(tmp_path), "server_path": str(binary)})
    row = next(r for r in checks(settings) if r.name == "model server")
    assert not row.ok and "not executable" in row.detail and "server_path" in row.fix
    binary.chmod(0o755)
    row = next(r for r in checks(settings) if r.name == "model server")
    assert row.ok and row.detail.startswith("llama-server (local_model.server_path")


def test_a_users_gguf_is_named_as_the_embedded_model(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    settings = Settings(local_model={"cache_dir": str(tmp_path), "model_file": str(gguf)})
    row = next(r for r in checks(settings) if r.name == "model file")
    assert not row.ok and row.detail == f"local_model.model_file {gguf} does not exist"
    assert "local_model.model_file" in row.fix
    gguf.write_bytes(b"GGUF" + bytes(100))
    row = next(r for r in checks(settings) if r.name == "model file")
    assert row.ok and row.detail.startswith(f"embedded model: {gguf} (from local_model.model_file")
    gguf.chmod(0)
    try:
        row = next(r for r in checks(settings) if r.name == "model file")
        if os.geteuid() != 0:  # root reads anything
            assert not row.ok and "is not readable" in row.detail
    finally:
        gguf.chmod(0o644)
