"""`greenloop generate` on the terminal: JSON result, exit codes, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.cli import main
from tests.agent.generate.conftest import WC_FILES, WC_INTERFACES, WC_PLAN, file_oracle, tree

GOOD = {**WC_FILES, "wordcount/core.py": "def count_words(text: str) -> int:\n    return len(text.split())\n"}


@pytest.fixture
def cli_env(tmp_path: Path, scripted_llm: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GREENLOOP_LLM__API_KEY", "test-key")
    monkeypatch.setenv("GREENLOOP_LLM__MAX_RETRIES", "0")
    monkeypatch.setenv("GREENLOOP_RUNS__STORE", str(tmp_path / "runs.sqlite3"))
    monkeypatch.setenv("GREENLOOP_LOOP__DIAGNOSIS", "false")
    return tmp_path


def test_generate_prints_json_and_exits_0_when_green(
    cli_env: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(WC_PLAN, step="generate_plan")
    scripted_llm.script(file_oracle(GOOD), step="generate_file")
    prompt = cli_env / "prompt.txt"
    prompt.write_text("a word counter\n")
    code = main(
        [
            "generate",
            "--prompt-file",
            str(prompt),
            "--out",
            "proj",
            "--json",
            "--sandbox",
            "local",
            "--base-url",
            scripted_llm.base_url,
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0, payload["summary"]
    assert payload["outcome"] == "green" and payload["out_dir"] == str(cli_env / "proj")
    assert sorted(payload["files"]) == sorted(["pyproject.toml", *GOOD])
    assert sorted(tree(cli_env / "proj")) == sorted([".greenloop/plan.md", "pyproject.toml", *GOOD])


def test_generate_exits_1_when_not_green_and_2_on_bad_input(
    cli_env: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(WC_PLAN, step="generate_plan")
    scripted_llm.script(file_oracle(WC_FILES), step="generate_file")
    scripted_llm.script('{"diagnosis": "unsure", "actions": []}', step="debug_plan")
    scripted_llm.script("no idea")  # every fix step: the model answers, uselessly (a failed call would exit 3)
    args = ["--sandbox", "local", "--base-url", scripted_llm.base_url, "--max-iterations", "1"]
    assert main(["generate", "a word counter", "--out", "proj", *args]) == 1
    out = capsys.readouterr()
    assert "the tests do not pass yet" in " ".join(out.out.split())
    assert main(["generate", "again", "--out", "proj", *args]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["generate", "--out", "other", *args]) == 2
    assert "say what to build" in capsys.readouterr().err
