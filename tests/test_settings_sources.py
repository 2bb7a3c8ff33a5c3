"""Settings layers: user file < workspace file (or --config) < environment < flags, and errors that say where."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from greenloop.errors import GreenloopError
from greenloop.settings import load_settings
from greenloop.settings_sources import line_of, user_config_path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("GREENLOOP_"):
            monkeypatch.delenv(name)


def write_user_file(text: str) -> Path:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_user_file_lives_in_the_xdg_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_config_path() == tmp_path / "greenloop" / "config.toml"


def test_each_layer_beats_the_one_below(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_user_file('[llm]\nmodel = "user"\ntemperature = 0.5\nseed = 1\nmax_tokens = 100\n')
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "workspace"\nseed = 2\nmax_tokens = 200\n')
    monkeypatch.setenv("GREENLOOP_LLM__SEED", "3")
    monkeypatch.setenv("GREENLOOP_LLM__MAX_TOKENS", "300")
    settings = load_settings(tmp_path, {"llm": {"max_tokens": 400}})
    assert (settings.llm.temperature, settings.llm.model, settings.llm.seed, settings.llm.max_tokens) == (
        0.5, "workspace", 3, 400)


def test_config_file_replaces_the_workspace_file(tmp_path: Path) -> None:
    write_user_file('[loop]\nmax_iterations = 7\n')
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "workspace"\nseed = 2\n')
    other = tmp_path / "ci.toml"
    other.write_text('[llm]\nmodel = "from-config"\n')
    settings = load_settings(tmp_path, config_file=other)
    assert (settings.llm.model, settings.llm.seed, settings.loop.max_iterations) == ("from-config", 1234, 7)


def test_a_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GreenloopError, match=r"--config .*nope.toml: no such file"):
        load_settings(tmp_path, config_file=tmp_path / "nope.toml")


def test_an_unknown_key_names_the_file_and_line(tmp_path: Path) -> None:
    path = write_user_file('[llm]\nmodel = "x"\n\nmodle = "typo"\n')
    with pytest.raises(GreenloopError) as error:
        load_settings(tmp_path)
    assert f"{path}:4: llm.modle: unknown key" in str(error.value)


def test_a_wrong_type_in_pyproject_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.greenloop.loop]\nmax_iterations = "many"\n')
    with pytest.raises(GreenloopError) as error:
        load_settings(tmp_path)
    assert f"{tmp_path / 'pyproject.toml'}:5: loop.max_iterations:" in str(error.value)


def test_a_malformed_price_entry_names_the_model(tmp_path: Path) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm.prices."gpt-4o"]\nprompt = "cheap"\ncompletion = -1\n')
    with pytest.raises(GreenloopError) as error:
        load_settings(tmp_path)
    message = str(error.value)
    assert f"{tmp_path / 'greenloop.toml'}:2: llm.prices.gpt-4o.prompt:" in message
    assert f"{tmp_path / 'greenloop.toml'}:3: llm.prices.gpt-4o.completion:" in message


def test_a_bad_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREENLOOP_LLM__TEMPERATURE", "hot")
    with pytest.raises(GreenloopError, match=r"GREENLOOP_LLM__TEMPERATURE: llm\.temperature:"):
        load_settings(None)


@pytest.mark.parametrize(
    ("key", "line"),
    [(("llm", "model"), 3), (("llm",), 2), (("llm", "prices", "a.b", "prompt"), 6), (("loop", "x"), 1),
     (("tool",), None)],
)
def test_line_of_finds_keys_tables_and_dotted_keys(key: tuple[str, ...], line: int | None) -> None:
    text = 'loop.x = 2\n[llm]\nmodel = "m"  # a comment\n\n[llm.prices."a.b"]\nprompt = 1\n'
    assert line_of(text, key) == line
