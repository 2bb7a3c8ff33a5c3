"""The embedded model server's process: started on 127.0.0.1, restarted once after a crash, stopped with us.

`LocalModelServer` starts the server `local_binary` chooses (llama.cpp's, as a
`llama-server` executable or from the xllamacpp wheel, else `python -m
llama_cpp.server`) in its own process group on a free port, waits until `GET
/v1/models` answers, and stops the whole group (SIGTERM, then SIGKILL) on exit, on
cancel, at interpreter exit, and (Linux) when the process that started it dies. A
server that will not start falls back to the next one there
(`local_binary.fallback_after`); one that dies mid-run is started again once on the
same port (the client retries connection errors meanwhile), and a second crash is
an error that the run ends with.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import httpx

from greenloop.errors import EnvironmentProblem, GreenloopError
from greenloop.llm.local_binary import ServerChoice, choose_server, fallback_after, llama_cpp_python_installed
from greenloop.llm.local_command import server_command
from greenloop.llm.local_model import cache_dir, fetch
from greenloop.settings import LocalModelSettings

_PR_SET_PDEATHSIG = 1
log = logging.getLogger(__name__)


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


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class LocalModelServer:
    """`async with LocalModelServer(settings) as server:` -> `server.base_url`; `server.choice` says which."""

    def __init__(self, settings: LocalModelSettings, *, alias: str = "local", port: int = 0,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.settings = settings
        self.alias = alias
        self.progress = progress
        self.requested_port = port  # 0: a free one
        self.port = 0
        self.choice: ServerChoice | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.serving = False  # the current process answered /models and has not died since
        self.failure: EnvironmentProblem | None = None  # set when it crashed again after its restart
        self.log_path = cache_dir(settings) / "llama-server.log"  # per port once started
        self._model: Path | None = None
        self._watch: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def slots(self) -> tuple[int, str]:
        """Requests the started server decodes at once, and why it is fewer than `local_model.parallel` ("")."""
        if self.choice is not None and self.choice.kind == "llama-cpp-python" and self.settings.parallel > 1:
            return 1, ("llama-cpp-python's server decodes one request at a time (no parallel slots): "
                       "the round's candidates are asked one at a time")
        return self.settings.parallel, ""

    async def __aenter__(self) -> LocalModelServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
        if self.failure is not None and isinstance(exc, Exception):  # the run's error came from the crash
            raise self.failure from exc

    async def start(self) -> None:
        """Fetch the model, choose the server, start it and wait until it answers."""
        self._model = await asyncio.to_thread(fetch, self.settings, self.progress)
        self.choice = choose_server(self.settings)
        if self.requested_port and port_in_use(self.requested_port):
            raise EnvironmentProblem(
                f"Port {self.requested_port} on 127.0.0.1 is in use; pick another (--port) or 0 for a free one."
            )
        while True:
            try:
                await self._start_chosen()
                break
            except GreenloopError as failed:
                fallback = fallback_after(self.choice, self.settings, _first_line(failed))
                if fallback is None:
                    raise
                log.warning("%s; falling back to %s", failed, fallback.kind)
                self.choice = fallback
        self._watch = asyncio.create_task(self._restart_on_crash())

    async def _start_chosen(self) -> None:
        """Start `self.choice`; a free port taken by someone else meanwhile is retried once on another."""
        assert self.choice is not None
        if self.choice.kind == "llama-cpp-python" and not llama_cpp_python_installed():
            raise EnvironmentProblem(
                f"The embedded model needs a model server ({self.choice.reason}): pip install "
                "'greenloop[local]' (xllamacpp, prebuilt), run `greenloop model fetch` to build llama-server, "
                "or set llm.base_url / OPENAI_BASE_URL to a model server."
            )
        for attempt in range(2):
            self.port = self.requested_port or free_port()
            try:
                await self._launch()
                return
            except GreenloopError:
                if self.requested_port or attempt or not _bind_failed(self._log_tail()):
                    raise

    async def _launch(self) -> None:
        assert self.choice is not None and self._model is not None
        self.log_path = cache_dir(self.settings) / f"llama-server-{self.port}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = server_command(self.choice, self.settings, self._model, self.port, self.alias)
        try:
            with self.log_path.open("wb") as out:
                self.process = await asyncio.create_subprocess_exec(
                    *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True, preexec_fn=_die_with_parent,
                )
        except OSError as exc:  # vanished or lost its x bit since it was chosen
            raise EnvironmentProblem(f"Cannot run {cmd[0]}: {exc}.") from exc
        atexit.register(self._kill_now)
        try:
            await self._wait_ready()
            self.serving = True
        except BaseException:
            await self._stop_process(keep_log=True)
            raise

    async def _wait_ready(self) -> None:
        assert self.process is not None and self.choice is not None
        deadline = time.monotonic() + self.settings.startup_timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while time.monotonic() < deadline:
                if self.process.returncode is not None:
                    raise EnvironmentProblem(
                        f"The embedded model server ({self.choice.kind}) exited with code "
                        f"{self.process.returncode}. Its log ({self.log_path}) ends with:\n{self._log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.base_url}/models")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise EnvironmentProblem(
            f"The embedded model server ({self.choice.kind}) did not answer within "
            f"{self.settings.startup_timeout:g}s (local_model.startup_timeout). "
            f"Its log ({self.log_path}) ends with:\n{self._log_tail()}"
        )

    async def _restart_on_crash(self) -> None:
        """Start the server again (same port) the first time it dies; after the second, set `failure`."""
        while self.process is not None:
            code = await self.process.wait()
            self.serving = False
            tail = self._log_tail()
            if self.restarts >= 1:
                self.failure = EnvironmentProblem(
                    f"The embedded model server ({self.choice.kind if self.choice else '?'}) crashed again "
                    f"after a restart (exit code {code}); the run stops. Its log ({self.log_path}) ends "
                    f"with:\n{tail}\nCheck memory and local_model.n_ctx, or set local_model.server."
                )
                log.error("%s", self.failure)
                atexit.unregister(self._kill_now)
                self.process = None
                return
            self.restarts += 1
            log.warning("the embedded model server exited with code %s; starting it again. Log tail:\n%s",
                        code, tail)
            try:
                await self._launch()
            except GreenloopError as exc:
                self.failure = EnvironmentProblem(f"The embedded model server crashed and did not restart: {exc}")
                log.error("%s", self.failure)
                return

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    async def stop(self, keep_log: bool = False) -> None:
        """SIGTERM the process group, SIGKILL after 5 s; safe to call twice. The log is kept on failure."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(watch)
        await self._stop_process(keep_log=keep_log or self.failure is not None or self.restarts > 0)

    async def _stop_process(self, keep_log: bool) -> None:
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


def _bind_failed(log_tail: str) -> bool:
    """llama-server's and uvicorn's words for a port someone else took."""
    text = log_tail.lower()
    return "couldn't bind" in text or "address already in use" in text


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
