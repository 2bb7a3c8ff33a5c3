"""The editor's `greenloop` section -> Settings overrides (camelCase -> snake_case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.errors import GreenloopError
from greenloop.lsp.config import read_editor_config, snake
from greenloop.settings import load_settings


def test_snake() -> None:
    assert snake("maxIterations") == "max_iterations"
    assert snake("baseUrl") == "base_url"
    assert snake("seed") == "seed"


def test_vscode_section_maps_onto_settings(tmp_path: Path) -> None:
    section = {
        "llm": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "model": "m",
            "temperature": 0,
            "seed": None,
            "maxTokens": 512,
        },
        "sandbox": {"backend": "local", "template": ""},
        "loop": {"maxIterations": 2, "maxCost": 0.5, "maxSeconds": None, "diagnosis": False, "history": True},
        "runTestsOnSave": True,
        "server": {"path": "/usr/bin/greenloop"},
    }
    config = read_editor_config(section)
    assert config.run_tests_on_save is True
    assert config.ignored == []
    assert config.overrides == {
        "llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "temperature": 0, "max_tokens": 512},
        "sandbox": {"backend": "local"},
        "loop": {"max_iterations": 2, "max_cost": 0.5, "diagnosis": False, "history": True},
    }
    settings = load_settings(tmp_path, config.overrides)
    assert settings.loop.max_iterations == 2 and settings.sandbox.backend == "local"
    assert settings.llm.max_tokens == 512 and settings.sandbox.template == "auto"


def test_unknown_keys_and_the_api_key_are_ignored() -> None:
    config = read_editor_config({"llm": {"apiKey": "sk-secret", "nope": 1}, "bogus": {"x": 1}, "loop": 3})
    assert config.overrides == {}
    assert sorted(config.ignored) == ["bogus", "llm.apiKey", "llm.nope", "loop"]


def test_the_small_edits_old_names_are_read_and_the_new_one_wins() -> None:
    """`greenloop.loop.mutants` (deprecated in package.json) still sets loop.small_edits; with both set, the new one."""
    assert read_editor_config({"loop": {"mutants": 5, "mutationSeconds": 9}}).overrides == {
        "loop": {"small_edits": 5, "small_edits_seconds": 9}}
    for section in ({"mutants": 5, "smallEdits": 7}, {"smallEdits": 7, "mutants": 5}):
        config = read_editor_config({"loop": section})
        assert config.overrides == {"loop": {"small_edits": 7}} and config.ignored == []


def test_nothing_or_not_an_object() -> None:
    assert read_editor_config(None).overrides == {}
    assert read_editor_config([1]).run_tests_on_save is False


def test_invalid_values_fail_when_loaded(tmp_path: Path) -> None:
    config = read_editor_config({"loop": {"maxIterations": 0}})
    with pytest.raises(GreenloopError):
        load_settings(tmp_path, config.overrides)
