"""A Docker sandbox's long-lived channel into its container: one exec whose stdin and stdout carry each request.

Docker's archive calls cost about a second each on a loaded machine (`put_archive` to sync a candidate,
`get_archive` to read its report), and an exec a tenth of that; a request over an open exec costs a
few milliseconds. While warm runs are on, a sandbox sends its test runs (the command, then the report
read) and its small syncs here (channel_agent.py runs them in the container as an exec and
`put_archive` would). A channel that breaks (its agent killed, an answer that is not one, a run past
its time) is closed, every process of the sandbox user is killed, and the caller goes the usual way.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import socket
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any

from greenloop_sandbox.docker_exec import USER, exec_result, kill_all_blocking, wrap
from greenloop_sandbox.output import CappedOutput
from greenloop_sandbox.values import ExecResult

log = logging.getLogger(__name__)

START_SECONDS = 30.0
GRACE = 10.0  # past a command's timeout, the answer is this late before the channel is given up
MAX_WRITE = 4 << 20  # a larger sync goes by put_archive (a request is one line in memory on both ends)


# python sets LC_CTYPE in its own environment when the locale is C (PEP 538), and the agent's commands would
# inherit it: the agent is told what LC_CTYPE was ("=value", or "" for none) and gives its commands that
_START = 'GREENLOOP_LC_CTYPE="${LC_CTYPE+=$LC_CTYPE}" exec python3 -S -P "$0"'


class ChannelError(Exception):
    """The channel broke: the request may or may not have run."""


class Channel:
    """The host end: blocking requests, one at a time (the sandbox's lock), from a worker thread."""

    def __init__(self, client: Any, container_id: str, agent: str) -> None:
        self.client, self.container_id = client, container_id
        ex = client.api.exec_create(container_id, ["sh", "-c", _START, agent], stdin=True, stdout=True,
                                    stderr=True, user=USER, workdir="/")
        sock = client.api.exec_start(ex["Id"], socket=True)
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._raw = sock
        self._lines = b""
        self.broken = False
        try:
            hello = self._answer(time.monotonic() + START_SECONDS, None, None)
            self.pgid = int(hello["pgid"])
        except (ChannelError, KeyError, TypeError, ValueError) as exc:
            self.close()
            raise ChannelError(f"the channel's agent did not start: {exc}") from exc

    def run(self, command: str | list[str], *, timeout: float, env: Mapping[str, str], workdir: str,
            on_out: Callable[[bytes], None], on_err: Callable[[bytes], None],
            read: str | None = None) -> tuple[int, str | None]:
        """`command` as run_in_container runs it (wrapped); its exit code, and the file `read` after it."""
        request = {"op": "run", "argv": wrap(command, timeout), "env": dict(env), "cwd": workdir, "read": read}
        done = self._request(request, time.monotonic() + timeout + GRACE, on_out, on_err)
        try:
            text = done.get("read")
            return int(done["code"]), base64.b64decode(text).decode("utf-8", errors="replace") if text else None
        except (KeyError, TypeError, ValueError) as exc:
            self.kill()
            raise ChannelError(f"the channel's agent said what is not an answer: {str(done)[:200]}") from exc

    def write(self, root: str, files: list[tuple[str, bytes, int]]) -> None:
        rows = [[rel, base64.b64encode(data).decode(), mode] for rel, data, mode in files]
        self._request({"op": "write", "root": root, "files": rows}, time.monotonic() + 60, None, None)

    def close(self) -> None:
        self.broken = True
        for thing in (self._sock, self._raw):
            with contextlib.suppress(Exception):  # already closed
                thing.close()

    def kill(self) -> None:
        """Close it and kill every process of the sandbox user (the agent, what it ran, the warm worker)."""
        self.close()
        kill_all_blocking(self.client, self.container_id)

    def _request(self, request: dict[str, Any], deadline: float, on_out: Callable[[bytes], None] | None,
                 on_err: Callable[[bytes], None] | None) -> dict[str, Any]:
        if self.broken:
            raise ChannelError("the channel is closed")
        try:
            try:
                self._sock.settimeout(max(0.1, deadline - time.monotonic()))
                self._sock.sendall(json.dumps(request).encode() + b"\n")
            except OSError as exc:
                raise ChannelError(f"the channel broke ({exc})") from exc
            done = self._answer(deadline, on_out, on_err)
        except ChannelError:
            self.kill()
            raise
        if "error" in done:
            raise ChannelError(f"the channel's agent could not do it: {done['error']}")
        return done

    def _answer(self, deadline: float, on_out: Callable[[bytes], None] | None,
                on_err: Callable[[bytes], None] | None) -> dict[str, Any]:
        """Messages until the `done` one; its value."""
        while True:
            while b"\n" not in self._lines:
                self._lines += self._frame(deadline)
            line, self._lines = self._lines.split(b"\n", 1)
            try:
                message = json.loads(line)
                if "done" in message:
                    return dict(message["done"])
                chunk = base64.b64decode(message.get("out") or message.get("err") or "")
            except (ValueError, TypeError, AttributeError) as exc:
                raise ChannelError(f"the channel's agent said what is not an answer: {line[:200]!r}") from exc
            sink = on_out if "out" in message else on_err
            if sink is not None:
                sink(chunk)

    def _frame(self, deadline: float) -> bytes:
        """The next piece of the agent's stdout (Docker's multiplexed stream; its stderr is dropped)."""
        while True:
            header = self._exactly(8, deadline)
            stream, size = header[0], struct.unpack(">I", header[4:])[0]
            data = self._exactly(size, deadline)
            if stream == 1:
                return data

    def _exactly(self, n: int, deadline: float) -> bytes:
        data = b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelError("the channel's agent did not answer in time")
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(n - len(data))
            except OSError as exc:  # a timeout too
                raise ChannelError(f"the channel broke ({exc})") from exc
            if not chunk:
                raise ChannelError("the channel's agent is gone")
            data += chunk
        return data


async def run_in_channel(channel: Channel, command: str | list[str], *, timeout: float,  # noqa: ASYNC109 (as run_in_container)
                         env: Mapping[str, str], workdir: str, output_limit: int,
                         read: str | None = None) -> tuple[ExecResult, str | None]:
    """`command` as run_in_container runs it, and the file `read` after it; ChannelError when the channel broke."""
    out, err = CappedOutput(output_limit), CappedOutput(output_limit)
    start = time.monotonic()
    task = asyncio.ensure_future(asyncio.to_thread(channel.run, command, timeout=timeout, env=env, workdir=workdir,
                                                   on_out=out.feed, on_err=err.feed, read=read))
    task.add_done_callback(_seen)
    try:
        code, text = await asyncio.shield(task)
    except asyncio.CancelledError:
        channel.broken = True  # nothing more goes this way; the thread still reading sees the agent go
        await asyncio.shield(asyncio.to_thread(channel.kill))
        raise
    return exec_result(code, out, err, time.monotonic() - start, timeout), text


class SandboxChannel:
    """A sandbox's channel, when it has one: requests that go the usual way (None, False) when it has none or it
    broke; `on_break` hears of a break (the agent's kill took the warm worker too)."""

    def __init__(self, on_break: Callable[[], None]) -> None:
        self.channel: Channel | None = None
        self.on_break = on_break

    @property
    def pgid(self) -> int | None:
        return self.channel.pgid if self.channel is not None else None

    async def open(self, client: Any, container_id: str, agent: str) -> None:
        if self.channel is not None and not self.channel.broken:
            return
        try:
            self.channel = await asyncio.to_thread(Channel, client, container_id, agent)
        except Exception as exc:  # the engine refused the exec too: runs go by exec and archive, as without warm runs
            log.warning("no channel into the sandbox: %s", exc)

    async def run(self, command: str, *, timeout: float, env: Mapping[str, str], workdir: str,  # noqa: ASYNC109 (as run_in_container)
                  output_limit: int, read: str | None) -> tuple[ExecResult, str | None] | None:
        """A run and the read of its report (run_in_channel), or None."""
        if self.channel is None:
            return None
        try:
            return await run_in_channel(self.channel, command, timeout=timeout, env=env, workdir=workdir,
                                        output_limit=output_limit, read=read)
        except ChannelError as exc:
            self._broke(exc)
            return None
        except asyncio.CancelledError:  # run_in_channel killed everything
            self.channel = None
            self.on_break()
            raise

    async def write(self, root: str, files: Mapping[str, bytes], mode: Callable[[bytes], int]) -> bool:
        """`files` written under `root` as put_archive writes their tar (file modes by `mode`), or False."""
        if self.channel is None or sum(len(d) for d in files.values()) > MAX_WRITE:
            return False
        rows = [(rel, data, mode(data)) for rel, data in files.items()]
        channel = self.channel
        task = asyncio.ensure_future(asyncio.to_thread(channel.write, root, rows))
        task.add_done_callback(_seen)
        try:
            await asyncio.shield(task)
            return True
        except ChannelError as exc:
            self._broke(exc)
            return False
        except asyncio.CancelledError:  # half written, maybe: no request goes after it; the sync starts over
            channel.broken = True
            self._broke(ChannelError("cancelled during a write"))
            await asyncio.shield(asyncio.to_thread(channel.kill))
            raise

    def drop(self) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            channel.close()

    def _broke(self, exc: Exception) -> None:
        log.warning("the channel into the sandbox broke; runs go by exec: %s", exc)
        self.channel = None
        self.on_break()


def _seen(task: asyncio.Future[Any]) -> None:
    """A request's thread that ended after its caller was cancelled: its error (the agent killed) is expected."""
    if not task.cancelled():
        task.exception()
