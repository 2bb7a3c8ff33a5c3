"""The scripted server itself, run standalone as the editor's end-to-end tests run it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "scripted_llm.py"
pytestmark = pytest.mark.timeout(30)


def post(url: str, body: dict[str, object], step: str) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Greenloop-Step": step},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        result: dict[str, object] = json.loads(response.read())
        return result


def test_standalone_server_prints_ready_and_serves_its_script(tmp_path: Path) -> None:
    rules = tmp_path / "rules.py"
    rules.write_text(
        "llm.script('plan reply', step='plan')\n"
        "def setup(server):\n"
        "    server.script(lambda req: Reply.text('echo ' + req['messages'][-1]['content']))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", "0", "--script", str(rules)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:")
        base = line.split()[1]
        chat = f"{base}/chat/completions"
        messages = [{"role": "user", "content": "hello"}]
        planned = post(chat, {"model": "m", "messages": messages}, "plan")
        echoed = post(chat, {"model": "m", "messages": messages}, "other")
        assert planned["choices"][0]["message"]["content"] == "plan reply"  # type: ignore[index]
        assert echoed["choices"][0]["message"]["content"] == "echo hello"  # type: ignore[index]
        with urllib.request.urlopen(f"{base}/models", timeout=10) as response:
            assert [m["id"] for m in json.loads(response.read())["data"]] == ["local", "scripted"]
        with urllib.request.urlopen(base.removesuffix("/v1") + "/_scripted/requests", timeout=10) as response:
            assert [r["step"] for r in json.loads(response.read())] == ["plan", "other"]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
