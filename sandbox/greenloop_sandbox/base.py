"""The async Sandbox interface that every backend (Docker, local) implements."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType

from greenloop_sandbox.case_limits import CaseLimits
from greenloop_sandbox.case_times import CaseTimes, EarlyStop
from greenloop_sandbox.report import TestReport
from greenloop_sandbox.templates import SUPPORT_DIR, EnvTemplate
from greenloop_sandbox.values import (
    DEFAULT_LIMITS,
    ExecResult,
    InstalledFile,
    InstallResult,
    Limits,
    SandboxError,
)

__all__ = ["DEFAULT_LIMITS", "ExecResult", "InstallResult", "InstalledFile", "Limits", "Sandbox", "SandboxError"]


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
    cases: CaseLimits  # its per-test limits (case_limits.py), made by the backend with its own probe and file

    def workspace_dir(self) -> str | None:
        """The workspace root as the sandbox's commands see it (tracebacks name files under it),
        or None when the sandbox is not running."""
        return None

    def support_dir(self) -> str:
        """Where the template's support files (its test runners) are, as the sandbox's commands see them."""
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
        return self.cases.times

    async def case_limits(self, test_ids: list[str] | None, stop: EarlyStop | None = None) -> tuple[float, dict[str, str]]:
        """The per-test timeout argument for a run of `test_ids`, and the environment that carries each
        test's own limit and the early stop to a runner that reads them (case_limits.CaseLimits.for_run)."""
        return await self.cases.for_run(self.template, self.limits.test_case_timeout, test_ids, stop)

    def add_note(self, why: str) -> None:
        """Add `why` to what a user should know about this sandbox."""
        self.note = f"{self.note}; {why}" if self.note else why

    def new_case_limits(self, put: Callable[[bytes], Awaitable[str]]) -> CaseLimits:
        """The backend's `cases`: probes run through `exec`, the limits file written by `put`."""
        async def probe(command: str) -> bool:
            return (await self.exec(command, timeout=60)).ok

        return CaseLimits(self.limits.case_timeout_factor, probe=probe, put=put, note=self.add_note)

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

