"""The embedded server's process handling: choice, start, crash and restart, port in use, fallback, cleanup.

A small executable script stands in for `llama-server` (a real process on a
real port that answers `GET /v1/models`); the start, watch, restart and kill
code is the real one. `POST /crash` makes the script exit with code 3. xllamacpp's
server is the real one (the `[local]` extra), given a file that is no model.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import local_binary, local_command
from greenloop.llm.local_binary import build_failure_log, built_server, choose_server
from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings

FAKE = r'''#!{python}
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
argv = sys.argv[1:]
with open(os.environ["FAKE_LAUNCHES"], "a") as out:
    out.write(json.dumps(argv) + "\n")
if os.environ.get("FAKE_MODE") == "die":
    print("error: this build cannot load the model", flush=True)
    sys.exit(1)
port = int(argv[argv.index("--port") + 1])

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'{{"data": []}}')
    def do_POST(self):
        os._exit(3)
    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


@pytest.fixture
def fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An executable fake llama-server; `FAKE_LAUNCHES` collects the argv of every start."""
    script = tmp_path / "bin" / "llama-server"
    script.parent.mkdir()
    script.write_text(FAKE.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("FAKE_LAUNCHES", str(tmp_path / "launches.jsonl"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no llama-server built before
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    yield script


def settings_for(tmp_path: Path, **extra: object) -> LocalModelSettings:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return LocalModelSettings(model_file=str(model), cache_dir=str(tmp_path / "logs"), startup_timeout=20,
                              **extra)  # type: ignore[arg-type]


def launches(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "launches.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_missing_or_non_executable_server_path_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(GreenloopError, match=r"does not exist.*unset it"):
        choose_server(LocalModelSettings(server_path=str(tmp_path / "nope")))
    plain = tmp_path / "llama-server"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(GreenloopError, match="not executable"):
        choose_server(LocalModelSettings(server_path=str(plain)))


def test_the_choice_prefers_the_setting_then_path_then_falls_back(
    fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_binary, "xllamacpp_version", lambda: None)  # as where the extra has no wheel
    fallback = choose_server(LocalModelSettings())
    assert fallback.kind == "llama-cpp-python" and "none built yet" in fallback.reason
    build_failure_log().parent.mkdir(parents=True)
    build_failure_log().write_text("cmake: boom")
    assert "build failed" in choose_server(LocalModelSettings()).reason
    with pytest.raises(GreenloopError, match="greenloop model fetch"):
        choose_server(LocalModelSettings(server="llama-server"))
    monkeypatch.setenv("PATH", f"{fake_server.parent}:/usr/bin:/bin")
    on_path = choose_server(LocalModelSettings())
    assert (on_path.kind, on_path.path, on_path.reason.split(":")[0]) == ("llama-server", fake_server, "found on PATH")
    assert choose_server(LocalModelSettings(server="llama-cpp-python")).kind == "llama-cpp-python"
    named = choose_server(LocalModelSettings(server_path=str(fake_server)))
    assert named.reason.startswith("local_model.server_path")


async def test_starts_with_the_llama_server_flags_and_leaves_nothing_running(
    tmp_path: Path, fake_server: Path
) -> None:
    settings = settings_for(tmp_path, server_path=str(fake_server), n_ctx=4096)
    async with LocalModelServer(settings, alias="local") as server:
        assert server.choice is not None and server.choice.kind == "llama-server"
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{server.base_url}/models")).status_code == 200
        assert server.process is not None
        pid = server.process.pid
    (argv,) = launches(tmp_path)
    assert argv[:12] == ["-m", settings.model_file, "--alias", "local", "--host", "127.0.0.1",
                         "--port", str(server.port), "-c", "4096", "-t", "1"]
    assert argv[argv.index("--parallel") + 1] == "1"
    assert not alive(pid)


async def test_a_crash_mid_run_restarts_once_then_ends_the_run_with_a_clear_error(
    tmp_path: Path, fake_server: Path
) -> None:
    settings = settings_for(tmp_path, server_path=str(fake_server))
    with pytest.raises(GreenloopError, match=r"crashed again after a restart \(exit code 3\)"):
        async with LocalModelServer(settings) as server, httpx.AsyncClient() as http:
            with pytest.raises(httpx.HTTPError):
                await http.post(f"{server.base_url}/chat/completions")
            for _ in range(200):  # restarted on the same port, and the restart saw it answer
                if server.restarts == 1 and server.serving:
                    break
                await asyncio.sleep(0.1)
            assert server.restarts == 1 and len(launches(tmp_path)) == 2
            with pytest.raises(httpx.HTTPError):
                await http.post(f"{server.base_url}/chat/completions")
            for _ in range(100):
                if server.failure is not None:
                    break
                await asyncio.sleep(0.1)
            raise httpx.ConnectError("the run's next model call")  # what the run would see
    assert len(launches(tmp_path)) == 2 and server.process is None


async def test_a_port_in_use_is_named_and_nothing_starts(tmp_path: Path, fake_server: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = LocalModelServer(settings_for(tmp_path, server_path=str(fake_server)), port=port)
        with pytest.raises(GreenloopError, match=f"Port {port} on 127.0.0.1 is in use"):
            await server.start()
    assert launches(tmp_path) == [] and server.process is None


async def test_a_llama_server_that_will_not_start_falls_back_to_llama_cpp_python(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{fake_server.parent}:/usr/bin:/bin")  # auto: found on PATH
    monkeypatch.setenv("FAKE_MODE", "die")
    healthy = ["env", "FAKE_MODE=ok", sys.executable, str(fake_server)]  # stands in for llama-cpp-python

    def fallback_command(settings: LocalModelSettings, model: Path, port: int, alias: str) -> list[str]:
        return [*healthy, "--port", str(port)]

    monkeypatch.setattr(local_command, "llama_cpp_python_command", fallback_command)
    for module in ("local_server", "local_binary"):  # both ask: the choice and the start
        monkeypatch.setattr(f"greenloop.llm.{module}.llama_cpp_python_installed", lambda: True)
    settings = settings_for(tmp_path)
    server = LocalModelServer(settings)
    async with server:
        assert server.choice is not None and server.choice.kind == "llama-cpp-python"
        assert "llama-server did not start" in server.choice.reason
        assert "exited with code 1" in server.choice.reason
    assert len(launches(tmp_path)) == 2


async def test_a_named_server_that_will_not_start_is_an_error_with_its_log(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "die")
    server = LocalModelServer(settings_for(tmp_path, server_path=str(fake_server)))
    with pytest.raises(GreenloopError, match=r"exited with code 1(.|\n)*cannot load the model"):
        await server.start()
    assert server.process is None and len(launches(tmp_path)) == 1


def require_xllamacpp() -> None:
    if local_binary.xllamacpp_version() is None:
        pytest.fail("xllamacpp is not installed: pip install -e '.[local]' (CI's setup does)")


def cache_a_built_server(fake_server: Path) -> Path:
    """The fake as the llama-server `greenloop model fetch` built (in the test's XDG cache)."""
    built_server().parent.mkdir(parents=True)
    built_server().write_bytes(fake_server.read_bytes())
    built_server().chmod(0o755)
    return built_server()


def test_auto_picks_xllamacpp_after_a_llama_server_on_path_and_before_a_built_one(
    fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_xllamacpp()
    built = cache_a_built_server(fake_server)
    prebuilt = choose_server(LocalModelSettings())
    assert prebuilt.kind == "xllamacpp" and f"xllamacpp {local_binary.XLLAMACPP_VERSION}" in prebuilt.reason
    with_flags = choose_server(LocalModelSettings(server_args=["--mlock"]))  # llama-server flags
    assert (with_flags.kind, with_flags.path) == ("llama-server", built)
    assert choose_server(LocalModelSettings(server="llama-server")).path == built
    monkeypatch.setenv("PATH", f"{fake_server.parent}:/usr/bin:/bin")
    assert (choose_server(LocalModelSettings()).kind, choose_server(LocalModelSettings()).path) == (
        "llama-server", fake_server)
    assert choose_server(LocalModelSettings(server="xllamacpp")).kind == "xllamacpp"
    monkeypatch.setattr(local_binary, "xllamacpp_version", lambda: None)
    with pytest.raises(GreenloopError, match=r"not installed: pip install 'greenloop\[local\]'"):
        choose_server(LocalModelSettings(server="xllamacpp"))


async def test_xllamacpp_that_cannot_load_the_model_is_an_error_with_its_log(tmp_path: Path) -> None:
    require_xllamacpp()
    server = LocalModelServer(settings_for(tmp_path, server="xllamacpp"))
    with pytest.raises(GreenloopError, match=r"\(xllamacpp\) exited with code 1(.|\n)*failed to load model"):
        await server.start()
    assert server.process is None


async def test_xllamacpp_that_will_not_start_falls_back_to_the_built_llama_server(
    tmp_path: Path, fake_server: Path
) -> None:
    require_xllamacpp()
    cache_a_built_server(fake_server)
    settings = settings_for(tmp_path, n_ctx=2048)
    async with LocalModelServer(settings) as server:
        assert server.choice is not None and server.choice.kind == "llama-server"
        assert "xllamacpp did not start" in server.choice.reason and "exited with code 1" in server.choice.reason
        assert server.process is not None
        pid = server.process.pid
    (argv,) = launches(tmp_path)  # xllamacpp's start is not the fake's: one launch of the fake
    assert argv[argv.index("-c") + 1] == "2048" and argv[argv.index("--port") + 1] == str(server.port)
    assert not alive(pid)
