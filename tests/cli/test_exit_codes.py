"""Exit codes, one meaning each: 0 green, 1 ran but not green, 2 usage error, 3 environment problem.

Real runs: the scripted model over real HTTP, the local sandbox.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from greenloop.cli import main
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(180)

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("GREENLOOP_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GREENLOOP_RUNS__ENABLED", "false")
    monkeypatch.setenv("GREENLOOP_LLM__BACKOFF", "0.01")
    monkeypatch.setenv("GREENLOOP_LOOP__SMALL_EDITS", "0")  # the model's replies decide these runs (tests/conftest.py)


def project(tmp_path: Path, calc: str = CALC, test: str | None = TEST) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(calc)
    if test is not None:
        (ws / "test_calc.py").write_text(test)
    return ws


def fix(ws: Path, *args: str) -> int:
    return main(["fix", str(ws), "--sandbox", "local", "--max-iterations", "1", *args])


def test_0_when_green(tmp_path: Path, scripted_llm: ScriptedLLM) -> None:
    ws = project(tmp_path, calc="def add(a, b):\n    return a + b\n")
    assert fix(ws, "--base-url", scripted_llm.base_url) == 0
    assert not scripted_llm.requests


def test_1_when_the_run_ends_red_and_a_hosted_model_costs_money(
    tmp_path: Path, scripted_llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_llm.script("I cannot tell what is wrong.")
    ws = project(tmp_path)
    assert fix(ws, "--base-url", scripted_llm.base_url, "--model", "gpt-4-turbo") == 1
    assert scripted_llm.requests
    out = " ".join(capsys.readouterr().out.split())
    assert "cost $" in out and "cost $0.0000" not in out  # priced by the shipped table, no llm.prices


def test_2_on_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = project(tmp_path)
    with pytest.raises(SystemExit) as bad_flag:
        main(["fix", str(ws), "--no-such-flag"])
    assert bad_flag.value.code == 2
    assert fix(tmp_path / "missing") == 2
    (ws / "greenloop.toml").write_text("[llm]\ntemperature = 9\n")
    assert fix(ws) == 2
    assert "greenloop.toml:2: llm.temperature" in capsys.readouterr().err


def test_3_when_no_tests_are_found(tmp_path: Path, scripted_llm: ScriptedLLM) -> None:
    ws = project(tmp_path, test=None)
    assert fix(ws, "--base-url", scripted_llm.base_url) == 3
    assert main(["sandbox", "run", str(ws), "--sandbox", "local"]) == 3


def test_3_when_no_model_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    monkeypatch.setenv("GREENLOOP_LLM__MAX_RETRIES", "0")
    assert fix(project(tmp_path), "--base-url", closed) == 3


def test_3_when_no_model_is_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREENLOOP_LOCAL_MODEL__ENABLED", "false")
    assert fix(project(tmp_path)) == 3
