"""`greenloop config show`: every effective value and its source; `--config FILE`; bad files exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from greenloop.cli import main
from greenloop.settings_sources import user_config_path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("GREENLOOP_", "OPENAI_")):
            monkeypatch.delenv(name)


def show(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, Any]]:
    assert main(["config", "show", "--json", *args]) == 0
    return {row["key"]: row for row in json.loads(capsys.readouterr().out)["settings"]}


def test_show_names_the_source_of_each_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text('[llm]\ntemperature = 0.5\nmodel = "user"\n')
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "workspace"\nseed = 2\n')
    monkeypatch.setenv("GREENLOOP_LLM__SEED", "3")
    rows = show(capsys, "-C", str(tmp_path), "--max-iterations", "9")
    assert (rows["llm.temperature"]["value"], rows["llm.temperature"]["where"]) == (0.5, f"{user}:2")
    assert (rows["llm.model"]["value"], rows["llm.model"]["where"]) == ("workspace", f"{tmp_path / 'greenloop.toml'}:2")
    assert (rows["llm.seed"]["value"], rows["llm.seed"]["where"]) == (3, "GREENLOOP_LLM__SEED")
    assert (rows["loop.max_iterations"]["value"], rows["loop.max_iterations"]["source"]) == (9, "flags")
    assert (rows["llm.max_tokens"]["value"], rows["llm.max_tokens"]["source"]) == (2048, "default")


def test_show_with_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "workspace"\n')
    chosen = tmp_path / "other.toml"
    chosen.write_text('[llm]\nmodel = "chosen"\n')
    rows = show(capsys, "-C", str(tmp_path), "--config", str(chosen))
    assert (rows["llm.model"]["value"], rows["llm.model"]["where"]) == ("chosen", f"{chosen}:2")


def test_show_masks_the_api_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm]\napi_key = "sk-secret"\n')
    assert main(["config", "show", "-C", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sk-secret" not in out and "llm.api_key" in out


def test_a_bad_file_exits_2_naming_key_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "greenloop.toml").write_text('[loop]\nmax_iterations = 3\nmax_iteration = 4\n')
    assert main(["config", "show", "-C", str(tmp_path)]) == 2
    assert f"{tmp_path / 'greenloop.toml'}:3: loop.max_iteration: unknown key" in capsys.readouterr().err
