"""Stopping the CLI with SIGTERM (a closed terminal, `kill`, a CI timeout) cleans up like Ctrl-C.

Python's default for SIGTERM ends the process without running any `finally`, which
would leave the run's container running. The CLI turns it into a cancel instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from greenloop_sandbox.engine import docker_client
from tests.support.scripted_llm import ScriptedLLM, slow

pytestmark = [pytest.mark.docker, pytest.mark.timeout(240)]

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def owned_containers(pid: int) -> list[str]:
    found = docker_client().containers.list(all=True, filters={"label": f"greenloop.owner_pid={pid}"})
    return [c.name for c in found]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_run_removes_the_container(
    sig: signal.Signals, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)
    scripted_llm.script(slow(120, "the model is still thinking"))  # whichever step asks first
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GREENLOOP_"))}
    env["GREENLOOP_RUNS__STORE"] = str(tmp_path / "runs.sqlite3")
    env["GREENLOOP_LOOP__SMALL_EDITS"] = "0"  # no small edit fixes calc before the model is asked (tests/conftest.py)
    proc = subprocess.Popen(
        [sys.executable, "-m", "greenloop", "fix", str(ws), "--sandbox", "docker",
         "--base-url", scripted_llm.base_url, "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not scripted_llm.requests and time.monotonic() < deadline:  # tests ran; the model is asked
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        assert scripted_llm.requests, "the run never reached the model"
        assert owned_containers(proc.pid), "the run's container should be up while it waits for the model"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert "interrupted" in err
    assert owned_containers(proc.pid) == []
    assert (ws / "calc.py").read_text() == CALC
