"""The settings model and loader: file < env < overrides, clear errors, and the generated docs page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.errors import GreenloopError
from greenloop.settings import Settings, load_settings, read_config_file
from greenloop.settings_doc import DOC_PATH, main, render


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("GREENLOOP_"):
            monkeypatch.delenv(name)


def test_defaults_need_no_file_and_no_env() -> None:
    settings = load_settings(None)
    assert settings == Settings()
    assert settings.llm.model == "local" and settings.local_model.enabled


def test_greenloop_toml_is_read(tmp_path: Path) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "qwen"\nseed = 7\n[loop]\nmax_iterations = 9\n')
    settings = load_settings(tmp_path)
    assert (settings.llm.model, settings.llm.seed, settings.loop.max_iterations) == ("qwen", 7, 9)


def test_pyproject_tool_table_is_read_when_there_is_no_greenloop_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.greenloop.llm]\nmodel = "from-pyproject"\n')
    assert load_settings(tmp_path).llm.model == "from-pyproject"
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "from-greenloop-toml"\n')
    assert load_settings(tmp_path).llm.model == "from-greenloop-toml"


def test_pyproject_without_a_greenloop_table_means_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert read_config_file(tmp_path) == {}


def test_env_beats_the_file_and_overrides_beat_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "file"\ntemperature = 0.5\nseed = 1\n')
    monkeypatch.setenv("GREENLOOP_LLM__MODEL", "env")
    monkeypatch.setenv("GREENLOOP_LLM__SEED", "2")
    settings = load_settings(tmp_path, {"llm": {"seed": 3}})
    # nested sections merge across sources: each key comes from the highest source that sets it
    assert (settings.llm.model, settings.llm.temperature, settings.llm.seed) == ("env", 0.5, 3)


def test_prices_table_from_the_file(tmp_path: Path) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm.prices."gpt-4o-mini"]\nprompt = 0.15\ncompletion = 0.6\n')
    price = load_settings(tmp_path).llm.prices["gpt-4o-mini"]
    assert (price.prompt, price.completion) == (0.15, 0.6)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[llm\nmodel=", "not valid TOML"),
        ('[llm]\ntemperature = "hot"\n', "temperature"),
        ("[llm]\ntemperature = 9\n", "temperature"),
        ('[lllm]\nmodel = "typo"\n', "lllm"),
        ('[llm]\nmodle = "typo"\n', "modle"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "greenloop.toml").write_text(content)
    with pytest.raises(GreenloopError, match=message):
        load_settings(tmp_path)


def test_bad_env_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREENLOOP_LOOP__MAX_ITERATIONS", "zero")
    with pytest.raises(GreenloopError, match="max_iterations"):
        load_settings(None)


def test_file_values_do_not_leak_into_later_settings(tmp_path: Path) -> None:
    (tmp_path / "greenloop.toml").write_text('[llm]\nmodel = "scoped"\n')
    assert load_settings(tmp_path).llm.model == "scoped"
    assert Settings().llm.model == "local"


def test_the_small_edits_old_setting_names_are_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`loop.mutants` and `loop.mutation_seconds` were the small edits' settings' names: a file, the environment
    and the editor that still use them set the new ones, in the sources' usual order; both names at once in one
    place is an error."""
    (tmp_path / "greenloop.toml").write_text("[loop]\nmutants = 5\nmutation_seconds = 9\n")
    loop = load_settings(tmp_path).loop
    assert (loop.small_edits, loop.small_edits_seconds) == (5, 9.0)
    monkeypatch.setenv("GREENLOOP_LOOP__MUTANTS", "7")
    assert load_settings(tmp_path).loop.small_edits == 7
    monkeypatch.delenv("GREENLOOP_LOOP__MUTANTS")
    assert load_settings(tmp_path, {"loop": {"mutants": 0}}).loop.small_edits == 0
    assert load_settings(tmp_path, {"loop": {"small_edits": 3}}).loop.small_edits == 3  # flags over the file
    monkeypatch.setenv("GREENLOOP_LOOP__MUTANTS", "0")  # the environment's old name under the flags' new one
    assert load_settings(tmp_path, {"loop": {"small_edits": 3}}).loop.small_edits == 3
    (tmp_path / "greenloop.toml").write_text("[loop]\nmutants = 5\nsmall_edits = 4\n")
    with pytest.raises(GreenloopError, match=r"old name of loop\.small_edits"):
        load_settings(tmp_path)


def test_configuration_page_is_current() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is stale: run `python -m greenloop.settings_doc`"
    )


def test_the_extension_settings_mirror_the_server() -> None:
    # CI was red from 784ed69 on: llm.stop_repeats was added here and not to package.json, and
    # only the extension's own checks (after the whole Python suite) compared them
    script = DOC_PATH.parents[1] / "vscode-extension" / "scripts" / "sync-settings.mjs"
    env = {"PATH": os.environ["PATH"], "PYTHON": sys.executable}
    if "PYTHONPATH" in os.environ:  # the greenloop under test (a worktree), not another installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    result = subprocess.run(["node", str(script), "--check"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_configuration_page_lists_every_parameter() -> None:
    page = render()
    for section, field in Settings.model_fields.items():
        model = field.annotation
        assert model is not None
        for key in model.model_fields:  # type: ignore[union-attr]
            assert f"`{section}.{key}`" in page
            assert f"GREENLOOP_{section.upper()}__{key.upper()}" in page


def test_check_mode_fails_on_a_stale_page(tmp_path: Path) -> None:
    page = tmp_path / "configuration.md"
    page.write_text("old\n")
    assert main(["--check", "--out", str(page)]) == 1
    assert main(["--out", str(page)]) == 0
    assert main(["--check", "--out", str(page)]) == 0
