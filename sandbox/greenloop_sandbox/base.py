"""The async Sandbox interface that every backend (Docker, local) implements."""

from __future__ import annotations

import abc
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from greenloop_sandbox.case_times import CaseTimes, EarlyStop
from greenloop_sandbox.report import TestReport

if TYPE_CHECKING:
    from greenloop_sandbox.templates import EnvTemplate

log = logging.getLogger(__name__)
CASES_ENV = "GREENLOOP_CASES"  # names the JSON file of per-test limits the python runner reads


class SandboxError(Exception):
    """A sandbox problem the user can act on; the message says what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox (Docker enforces all; local: rlimits, see LocalSandbox)."""

    memory: str = "2g"
    cpus: float = 2.0
    pids: int = 512
    exec_timeout: float = 120
    test_timeout: float = 300
    test_case_timeout: float = 15  # one test (where the template has a per-test timeout); 0: none
    case_timeout_factor: float = 20  # a test's limit: this many times what it took when it passed (case_times.py); 0: the cap
    output_limit: int = 1_000_000
    file_size: int = 1 << 30


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one command run inside a sandbox."""

    exit_code: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class InstalledFile:
    """One distribution an install put into the environment, and where its file came from."""

    name: str
    version: str
    filename: str
    sha256: str  # of the file fetched from the index (for one built in the sandbox: of its sdist)
    built: str  # "index": a wheel the index served; "sandbox": built from its sdist in a container
    modules: tuple[str, ...] = ()  # the top-level import names it provides (top_level.txt, else RECORD)


@dataclass(frozen=True)
class InstallResult(ExecResult):
    """An install's outcome with what it installed (empty when it failed)."""

    files: tuple[InstalledFile, ...] = ()


class Sandbox(abc.ABC):
    """An isolated place to run one workspace's commands and tests.

    Lifecycle: `await sb.start()` (or `async with`), `await sb.sync(files)` as
    often as the snapshot changes (only changed files are sent after the first
    sync), `exec` / `run_tests` / `install`, then `await sb.close()`, which
    must leave no container or process behind, even after cancellation.
    """

    name: str = "abstract"
    template: EnvTemplate  # the language environment (test command, package manager, what it provides)
    limits: Limits = DEFAULT_LIMITS
    note: str = ""  # what a user should know about this sandbox's isolation or tools
    _per_test: bool | None = None  # the template's per-test timeout works here (None: not probed yet)
    _times: CaseTimes | None = None  # what its tests took when they passed (the adaptive per-test timeout)
    _cases: tuple[bytes, str] | None = None  # the limits file last written, and where

    def workspace_dir(self) -> str | None:
        """The workspace root as the sandbox's commands see it (tracebacks name files under it),
        or None when the sandbox is not running."""
        return None

    def support_dir(self) -> str:
        """Where the template's support files (its test runners) are, as the sandbox's commands see them."""
        from greenloop_sandbox.templates import SUPPORT_DIR

        return SUPPORT_DIR

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def sync(self, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()) -> int:
        """Make the sandbox's workspace equal the snapshot; return how many files were written."""

    @abc.abstractmethod
    async def exec(
        self,
        command: str | list[str],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult: ...

    @abc.abstractmethod
    async def run_tests(self, test_ids: list[str] | None = None, *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                        stop: EarlyStop | None = None) -> TestReport:
        """Run the tests (all, or `test_ids`); `stop`: when the run may end early (case_times.EarlyStop)."""

    @property
    def case_times(self) -> CaseTimes:
        """What this sandbox's tests took when they passed, and which hung (learnt from every run)."""
        if self._times is None:
            self._times = CaseTimes(self.limits.case_timeout_factor)
        return self._times

    async def case_limits(self, test_ids: list[str] | None, stop: EarlyStop | None = None) -> tuple[float, dict[str, str]]:
        """The per-test timeout argument for a run of `test_ids`, and the environment that carries each
        test's own limit and the early stop to a runner that reads them (`case_limits` templates)."""
        cap = await self.per_test_timeout(self.limits.test_case_timeout)
        if not self.template.case_limits:
            return (self.case_times.run_limit(test_ids, cap) if cap else 0), {}
        data = self.case_times.payload(test_ids, cap, stop)
        if not cap:
            data.update(factor=0, stop_on_hang=[])
        text = json.dumps(data, sort_keys=True).encode()
        if self._cases is None or self._cases[0] != text:  # a round's small edits send the same file: once
            self._cases = (text, await self._put_cases(text))
        return cap, {CASES_ENV: self._cases[1]}

    async def _put_cases(self, data: bytes) -> str:
        """Write the runner's limits file where the sandbox's commands can read it; return its path."""
        raise NotImplementedError

    async def per_test_timeout(self, seconds: float) -> float:
        """`seconds` where the template's per-test timeout works in this sandbox, else 0 (probed once).

        The probe is the template's `case_timeout_probe`: the local backend's host may lack
        pytest-timeout, where an unknown `--timeout` would fail every run, and node has
        `--test-timeout` from 20.11 on only. Without it a note says so; hung tests then run
        until the whole run's timeout.
        """
        if seconds <= 0 or not self.template.case_timeout:
            return 0
        if self._per_test is None:
            probe = self.template.case_timeout_probe
            self._per_test = not probe or (await self.exec(probe, timeout=60)).ok
            if not self._per_test:
                why = (f"no per-test timeout for {self.template.name} here (`{probe}` failed): a hung test "
                       "runs until the whole run's timeout")
                self.note = f"{self.note}; {why}" if self.note else why
                log.warning("%s sandbox: %s", self.name, why)
        return seconds if self._per_test else 0

    @abc.abstractmethod
    async def install(self, packages: list[str]) -> ExecResult:
        """Add packages to the environment (cached per package set); never touches the workspace.

        No package code runs on the host: only files are fetched there (wheels; sdists as files),
        and an sdist is built, if at all, in a container. The result is an InstallResult."""

    @abc.abstractmethod
    async def run_setup(self, command: str) -> ExecResult:
        """Run a command at environment-build time (a DebugPlan "run" action); kept across restarts."""

    async def environment(self) -> str:
        """A mark of the environment as it is now (what installs and setup commands made it), which
        `restore_environment` puts back: a change tried for one candidate need not stay for the next."""
        return ""

    async def restore_environment(self, mark: str) -> None:
        """The environment as it was when `environment()` gave `mark` (the workspace stays as it is); a backend
        whose environment has no marks ("") keeps it as it is."""
        return None

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

