"""The embedded model server: llama-cpp-python's OpenAI server on 127.0.0.1, stopped when we are done.

`LocalModelServer` starts `python -m llama_cpp.server` in its own process
group on a free port, waits until `GET /v1/models` answers, and stops the
whole group (SIGTERM, then SIGKILL) on exit, on cancel, at interpreter exit,
and (Linux) when the process that started it dies.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import ctypes.util
import importlib.util
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import httpx

from greenloop.errors import GreenloopError
from greenloop.llm.local_model import cache_dir, fetch
from greenloop.settings import LocalModelSettings

_PR_SET_PDEATHSIG = 1


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None


_LIBC = _libc() if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _LIBC is not None:
        # SIGKILL, not SIGTERM: on SIGTERM uvicorn first finishes the request in flight, which for a
        # generation can take minutes of CPU after we are gone. The server has nothing to save.
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(settings: LocalModelSettings, model: Path, port: int, alias: str) -> list[str]:
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(settings.n_ctx),
           "--n_threads", str(settings.threads),
           # by default llama-cpp-python ends a running stream when another request arrives: files
           # written in parallel cut each other off, retry, and cut each other off again
           "--interrupt_requests", "false"]
    if settings.deterministic:
        cmd += ["--n_batch", "1", "--n_ubatch", "1"]
    return cmd


class LocalModelServer:
    """`async with LocalModelServer(settings) as server:` -> `server.base_url`."""

    def __init__(self, settings: LocalModelSettings, *, alias: str = "local", port: int = 0,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.settings = settings
        self.alias = alias
        self.progress = progress
        self.requested_port = port  # 0: a free one
        self.port = 0
        self.process: asyncio.subprocess.Process | None = None
        self.log_path = cache_dir(settings) / "llama-server.log"  # per port once started

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> LocalModelServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise GreenloopError(
                "The embedded model needs llama-cpp-python: pip install 'greenloop[local]' "
                "(or set llm.base_url / OPENAI_BASE_URL to a model server)."
            )
        model = await asyncio.to_thread(fetch, self.settings, self.progress)
        self.port = self.requested_port or free_port()
        self.log_path = cache_dir(self.settings) / f"llama-server-{self.port}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = await asyncio.create_subprocess_exec(
                *server_command(self.settings, model, self.port, self.alias),
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True, preexec_fn=_die_with_parent,
            )
        atexit.register(self._kill_now)
        try:
            await self._wait_ready()
        except BaseException:
            await self.stop(keep_log=True)
            raise

    async def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.settings.startup_timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while time.monotonic() < deadline:
                if self.process.returncode is not None:
                    raise GreenloopError(
                        f"The embedded model server exited with code {self.process.returncode}. "
                        f"Its log ({self.log_path}) ends with:\n{self._log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.base_url}/models")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise GreenloopError(
            f"The embedded model server did not answer within {self.settings.startup_timeout:g}s "
            f"(local_model.startup_timeout). Its log ({self.log_path}) ends with:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    async def stop(self, keep_log: bool = False) -> None:
        """SIGTERM the process group, SIGKILL after 5 s; safe to call twice. The log is kept on failure."""
        process = self.process
        if process is None:
            return
        atexit.unregister(self._kill_now)
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                await asyncio.shield(asyncio.wait_for(process.wait(), 5))
            except (TimeoutError, asyncio.CancelledError):
                _signal_group(process.pid, signal.SIGKILL)
                await asyncio.shield(process.wait())
        self.process = None
        if not keep_log:
            self.log_path.unlink(missing_ok=True)

    def _kill_now(self) -> None:
        if self.process is not None and self.process.returncode is None:
            _signal_group(self.process.pid, signal.SIGKILL)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
