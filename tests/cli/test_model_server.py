"""`greenloop model server | fetch` with xllamacpp installed (the `[local]` extra): nothing is built.

Real CLI calls in-process on an empty user cache; the model file is a user's GGUF, so nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from greenloop.cli import main
from greenloop.llm.local_binary import XLLAMACPP_VERSION, build_dir, xllamacpp_version


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("GREENLOOP_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no llama-server on PATH
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    monkeypatch.setenv("GREENLOOP_LOCAL_MODEL__MODEL_FILE", str(model))
    if xllamacpp_version() is None:
        pytest.fail("xllamacpp is not installed: pip install -e '.[local]' (CI's setup does)")


def test_model_server_names_xllamacpp_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "server"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"xllamacpp: installed: xllamacpp {XLLAMACPP_VERSION}, llama.cpp's server prebuilt")


def test_model_fetch_builds_nothing_when_xllamacpp_is_there(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "fetch"]) == 0
    assert "(nothing to build)" in capsys.readouterr().err
    assert not build_dir().exists()


def test_asking_for_a_llama_server_that_is_not_there_says_how_to_get_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GREENLOOP_LOCAL_MODEL__SERVER", "llama-server")
    assert main(["model", "server"]) == 2
    assert "Run `greenloop model fetch` to build it" in capsys.readouterr().err
