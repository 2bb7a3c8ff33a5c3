"""Warm test runs: when a sandbox's pytest run goes through its warm worker (warm_worker.py), and when it runs cold.

A sandbox with warm runs on starts the worker on its first python test run and sends each run of the
template's own runner (`run_pytest.py`) to it. A run the worker could not take, or that ended the way a
pytest run does not (a signal, an exit code pytest never gives, no report: a test that killed its own
process, a worker that died or hung) is run again cold, and that result counts; a worker that is gone is
started again on the next run. Runs stay cold for the rest of the sandbox's life once the worker says the
project cannot be forked safely (warm_worker.py), twice ran what a cold run then ran cleanly, or died or
hung more than twice; `notice()` says so once. docs/decisions/2026-11-warm-test-runs.md.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from greenloop_sandbox.values import ExecResult, SandboxError

log = logging.getLogger(__name__)

WORKER_FILE = Path(__file__).with_name("warm_worker.py")
SPARE_ENV = "GREENLOOP_SPARE"  # the worker's process group, which a command's cleanup leaves alive (docker_exec.py)
UNAVAILABLE = 121  # warm_worker.UNAVAILABLE
MARK = "greenloop-warm: unavailable:"  # warm_worker.MARK
_RUNNER = "python3 {support}/run_pytest.py "  # the python template's runner: the only command run warm
_PYTEST_CODES = range(6)  # ok, failed, interrupted, internal error, usage error, no tests
GIVE_UP_AFTER = 2  # warm runs that a cold rerun ran cleanly (or workers past this many that died), then all cold

RunOnce = Callable[[str], Awaitable[tuple[ExecResult, "str | None"]]]  # a command -> its result and report


class WorkerHost(Protocol):
    """What a backend does for the warm worker."""

    async def start_worker(self, env: dict[str, str]) -> int:
        """Start the worker with the test runs' environment; its process group (SandboxError if it does not start)."""

    async def stop_worker(self) -> None:
        """End the worker and whatever it still runs."""

    def worker_paths(self) -> tuple[str, str]:
        """The worker program and its socket, as the sandbox's commands see them."""


@dataclass
class WarmRuns:
    """One sandbox's warm runs: its worker's process group, and why runs are cold if they are."""

    enabled: bool = False
    pgid: int | None = None  # the running worker's process group
    off: str = ""  # why every run is cold from now on
    failures: int = 0  # warm runs that a cold rerun ran cleanly
    restarts: int = 0  # workers that died or hung
    ack_seconds: float = 60.0  # a worker that has not forked a run this long after it was asked is hung
    warm: int = 0  # runs the worker gave the result of
    cold: int = 0  # runs that ran cold (off, not applicable, or rerun)
    _told: bool = False

    def command(self, cold: str, support: str, host: WorkerHost) -> str | None:
        """The warm form of a cold test command (the python runner's), or None when this one runs cold."""
        head = _RUNNER.format(support=shlex.quote(support))
        if not self.enabled or self.off or not cold.startswith(head):
            return None
        script, sock = host.worker_paths()
        return f"python3 -S -P {shlex.quote(script)} run {shlex.quote(sock)} {self.ack_seconds:g} -- {cold[len(head):]}"

    def notice(self) -> str | None:
        """Why test runs went cold, the first time it is asked after they did; else None."""
        if not self.off or self._told:
            return None
        self._told = True
        return f"Test runs are cold from now on (each starts python and pytest again): {self.off}."

    async def run(self, host: WorkerHost, cold: str, support: str, env: dict[str, str],
                  once: RunOnce) -> tuple[ExecResult, str | None]:
        """`cold` run warm where it can, else (or again) cold: the result and report that count."""
        warm = self.command(cold, support, host)
        if warm is None:
            return await self._cold(once, cold)
        if self.pgid is None:
            try:
                self.pgid = await host.start_worker(env)
            except SandboxError as exc:
                await self.give_up(host, f"the warm worker did not start ({exc})")
                return await self._cold(once, cold)
        try:
            res, report = await once(warm)
        except BaseException:  # cancelled: the cleanup may have ended the worker too; a new one next time
            self.pgid = None
            raise
        if res.timed_out:  # as a cold run would; the worker may be what hung, so the next run gets a new one
            await self._stop(host)
            self.warm += 1
            return res, report
        why = rerun_reason(res, report)
        if why is None:
            self.warm += 1
            return res, report
        said = _said(res)
        if said is not None and not said.startswith(("the worker does not answer", "the worker stopped",
                                                     "the worker ended")):
            await self.give_up(host, said)  # the worker refuses: the project cannot be forked safely
        elif said is not None:  # dead or hung: a new one on the next run
            self.restarts += 1
            if self.restarts > GIVE_UP_AFTER:
                await self.give_up(host, f"the warm worker died or hung {self.restarts} times ({said})")
            await self._stop(host)
        log.info("warm run rerun cold: %s", why)
        res, report = await self._cold(once, cold)
        if said is None and rerun_reason(res, report) is None:
            self.failures += 1
            if self.failures >= GIVE_UP_AFTER:
                await self.give_up(host, f"{self.failures} forked runs ended badly ({why}) where cold runs did not")
        return res, report

    def worker_gone(self) -> None:
        """The worker ended with its container or channel: the next warm run starts a new one."""
        self.pgid = None

    async def restart(self, host: WorkerHost) -> None:
        """End the worker (the environment changes); the next run starts a new one."""
        await self._stop(host)

    async def give_up(self, host: WorkerHost, why: str) -> None:
        if not self.off:
            self.off = why
            log.warning("warm test runs are off: %s", why)
        await self._stop(host)

    async def _stop(self, host: WorkerHost) -> None:
        if self.pgid is not None:
            self.pgid = None
            await host.stop_worker()

    async def _cold(self, once: RunOnce, cold: str) -> tuple[ExecResult, str | None]:
        self.cold += 1
        return await once(cold)


def rerun_reason(res: ExecResult, report: str | None) -> str | None:
    """Why a run's result is not to be trusted as a forked run's (it is run again cold), or None."""
    said = _said(res)
    if said is not None:
        return f"the worker could not take it: {said}"
    if res.exit_code not in _PYTEST_CODES:
        return f"it ended with exit code {res.exit_code}, which pytest never gives"
    if report is None:
        return "it left no report"
    return None


def _said(res: ExecResult) -> str | None:
    if res.exit_code != UNAVAILABLE:
        return None
    line = next((row for row in res.stderr.splitlines() if row.startswith(MARK)), None)
    return line[len(MARK):].strip() if line is not None else None
