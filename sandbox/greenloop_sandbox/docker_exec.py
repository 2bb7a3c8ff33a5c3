"""One command in a running container: bounded streaming output, a timeout that kills the process tree."""

from __future__ import annotations

import asyncio
import shlex
import tarfile
import time
from collections.abc import Mapping
from typing import Any

from greenloop_sandbox.output import CappedOutput
from greenloop_sandbox.values import ExecResult

USER = "1000:1000"
# Runs the command under `timeout`, then kills every process the sandbox user still has (stragglers,
# daemons that escaped with setsid). PID 1 (docker-init, root) and this shell survive `kill -1`.
# With GREENLOOP_SPARE set (process groups, space-separated: the warm worker's, warm.py, and the channel's
# agent's, docker_channel.py) the processes of those groups live on: the others are killed one by one,
# in passes until a pass finds none (a fork between passes is caught by the next). A process cannot join
# such a group from another session; each run the worker forks, and each command the agent runs, starts
# its own session.
_SPARE = ('for pass in 1 2 3 4 5 6 7 8; do n=0; for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = "$$" ] '
          '&& continue; read -r s < "$d/stat" 2>/dev/null || continue; s=${s##*) }; set -- $s; '
          'case " $GREENLOOP_SPARE " in *" $3 "*) continue;; esac; kill -9 "$p" 2>/dev/null && n=1; done; '
          '[ $n = 0 ] && break; done')
_WRAPPER = ('timeout -s KILL "$0" "$@"; rc=$?; if [ -n "$GREENLOOP_SPARE" ]; then ' + _SPARE +
            '; else kill -9 -1 2>/dev/null; fi; exit $rc')
_GRACE = 10.0


def wrap(command: str | list[str], timeout: float) -> list[str]:
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    return ["sh", "-c", _WRAPPER, f"{timeout:.3f}", *argv]


def _run_blocking(client: Any, container_id: str, argv: list[str], env: Mapping[str, str], workdir: str,
                  out: CappedOutput, err: CappedOutput) -> int:
    api = client.api
    ex = api.exec_create(container_id, argv, stdout=True, stderr=True, environment=dict(env),
                         workdir=workdir, user=USER)
    for chunk_out, chunk_err in api.exec_start(ex["Id"], stream=True, demux=True):
        if chunk_out:
            out.feed(chunk_out)
        if chunk_err:
            err.feed(chunk_err)
    code = api.exec_inspect(ex["Id"]).get("ExitCode")
    return 137 if code is None else int(code)


def kill_all_blocking(client: Any, container_id: str) -> None:
    """Kill every process of the sandbox user in the container (a timeout, a cancel)."""
    try:
        ex = client.api.exec_create(container_id, ["sh", "-c", "kill -9 -1"], user=USER)
        client.api.exec_start(ex["Id"])
    except Exception:  # the container is gone: nothing left to kill
        pass


async def run_in_container(client: Any, container_id: str, command: str | list[str], *, timeout: float,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                           env: Mapping[str, str], workdir: str, output_limit: int) -> ExecResult:
    """Run `command` as the sandbox user; never leaves a process behind, even when cancelled."""
    out, err = CappedOutput(output_limit), CappedOutput(output_limit)
    start = time.monotonic()
    task = asyncio.ensure_future(asyncio.to_thread(
        _run_blocking, client, container_id, wrap(command, timeout), env, workdir, out, err))
    timed_out = False
    try:
        code = await asyncio.wait_for(asyncio.shield(task), timeout + _GRACE)
    except TimeoutError:
        timed_out = True
        await asyncio.to_thread(kill_all_blocking, client, container_id)
        code = await _settle(task)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.to_thread(kill_all_blocking, client, container_id))
        raise
    return exec_result(code, out, err, time.monotonic() - start, timeout, timed_out)


def exec_result(code: int, out: CappedOutput, err: CappedOutput, duration: float, timeout: float,
                timed_out: bool = False) -> ExecResult:
    """A wrapped command's result; killed by its `timeout` (exit 137 at that time) counts as timed out."""
    if code == 137 and duration >= timeout - 0.05:
        timed_out = True
    if timed_out:
        err.feed(f"\n[greenloop: killed after {timeout:g}s timeout]\n".encode())
    return ExecResult(code, out.text(), err.text(), duration, timed_out=timed_out,
                      truncated=out.truncated or err.truncated)


async def _settle(task: asyncio.Future[int]) -> int:
    try:
        return await asyncio.wait_for(task, _GRACE)
    except Exception:
        return 137


def shell_join(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def tar_entry(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    """A tar member owned by the sandbox user (uid/gid 1000), for files put into a container."""
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid = kind, mode, 1000, 1000
    info.uname = info.gname = "sandbox"
    return info
