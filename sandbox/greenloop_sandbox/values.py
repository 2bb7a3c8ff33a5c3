"""The plain values of the sandbox interface: its limits, a command's result, what an install put in, its error."""

from __future__ import annotations

from dataclasses import dataclass


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
