"""The agent's ports: the model client and the sandbox, opened from settings or injected.

`SandboxPort` is the only way into the sandbox for everything above it (the loops, generation and
the front ends): a `SandboxError` never passes it. A sync or test run that fails is a GreenloopError
(the user can act on it); an install or setup command the sandbox refuses is a `Refused` value, which
the caller turns into a rejected action whose reason goes back to the model.

A port may hold several sandboxes (`sandbox.workers`, spread over `sandbox.engines`): the first is the
warm one every call uses; `lease()` lends any free one, so a round tests its candidates in parallel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from greenloop.agent.install_gate import InstallGate
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient, open_llm
from greenloop.settings import Settings
from greenloop_sandbox import (
    EarlyStop,
    EnvTemplate,
    ExecResult,
    Limits,
    ProjectEnv,
    Sandbox,
    SandboxError,
    Spectrum,
    TestCollection,
    TestReport,
    collect_tests,
    detect_template,
    open_sandbox,
    read_dockerfile,
    read_tree,
    run_spectrum,
)
from greenloop_sandbox import Snapshot as FileTree
from greenloop_sandbox.languages import Language, load_language
from greenloop_sandbox.offline import leave_out
from greenloop_sandbox.packages import check_packages, check_pip_specs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refused:
    """A setup step the sandbox would not run (a package spec it refuses), and why."""

    reason: str


@contextmanager
def sandbox_errors() -> Iterator[None]:
    """A SandboxError raised in the block comes out as a GreenloopError with the same message."""
    try:
        yield
    except SandboxError as exc:
        raise GreenloopError(str(exc)) from exc


@dataclass(frozen=True)
class EnvironmentMark:
    """The sandboxes' environments at one moment (`SandboxPort.environment`), to go back to."""

    boxes: tuple[tuple[Sandbox, str], ...]


class SandboxPort:
    """A started sandbox as the agent and the front ends use it; see the module docstring."""

    def __init__(self, sandbox: Sandbox, extra: tuple[Sandbox, ...] = (), skipped: tuple[str, ...] = (), *,
                 ran: bool = False, left_out: set[str] | None = None, gate: InstallGate | None = None) -> None:
        self._sandbox = sandbox
        self.gate = gate or InstallGate()  # which packages may be installed (install_gate.py)
        self._left_out = left_out if left_out is not None else set()  # shared with the pool's other sandboxes
        self._ran = ran  # a leased sandbox's first run is a candidate's: the project's command was checked
        self._extra = list(extra)  # more sandboxes (other engines or containers) a round may lease
        self._skipped = skipped  # why an engine in the settings got no sandbox
        self._free: asyncio.Queue[SandboxPort] | None = None

    @property
    def workers(self) -> int:
        """How many sandboxes this port holds (candidates tested at once)."""
        return 1 + len(self._extra)

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[SandboxPort]:
        """A free sandbox of the pool, for one candidate's sync and test runs (the port itself with one)."""
        if not self._extra:
            yield self
            return
        if self._free is None:
            self._free = asyncio.Queue()
            for box in [self._sandbox, *self._extra]:
                self._free.put_nowait(self if box is self._sandbox else
                                      SandboxPort(box, ran=True, left_out=self._left_out, gate=self.gate))
        port = await self._free.get()
        try:
            yield port
        finally:
            self._free.put_nowait(port)

    @property
    def template(self) -> EnvTemplate:
        return self._sandbox.template

    @property
    def language(self) -> Language | None:
        """The template's language record (its import-name tables), None for a template without one."""
        try:
            return load_language(self._sandbox.template.name)
        except SandboxError:
            return None

    @property
    def backend(self) -> str:
        """Which backend runs it: "docker" or "local"."""
        return self._sandbox.name

    @property
    def note(self) -> str:
        """What a user should know about this sandbox's isolation or tools ("" when nothing)."""
        return "; ".join(n for n in (self._sandbox.note, *self._skipped) if n)

    def workspace_dir(self) -> str | None:
        return self._sandbox.workspace_dir()

    async def sync(self, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()) -> int:
        with sandbox_errors():
            return await self._sandbox.sync(files, deleted)

    async def run_tests(self, test_ids: list[str] | None = None, *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                        stop: EarlyStop | None = None) -> TestReport:
        """The tests (all, or `test_ids`); `stop`: when the run may end early, counted without the tests
        left out (their failures are skipped here, but the runner counts them)."""
        if stop is not None and stop.max_failures is not None and self._left_out:
            stop = replace(stop, max_failures=stop.max_failures + len(self._left_out))
        with sandbox_errors():
            report = await self._sandbox.run_tests(test_ids, timeout=timeout, stop=stop)
        first, self._ran = not self._ran, True
        if first and self.template.own_command:
            check_own_command(self.template.own_command, report)
        return leave_out(report, self._left_out) if self._left_out else report

    def warm_notice(self) -> str | None:
        """Why test runs went cold (warm.py), once per run; None when they did not or it was said."""
        for box in (self._sandbox, *self._extra):
            warm = getattr(box, "warm", None)
            if warm is not None and (text := warm.notice()) is not None:
                return str(text)
        return None

    async def collect_tests(self, *, timeout: float | None = None) -> TestCollection:  # noqa: ASYNC109
        """The synced workspace's test ids (collection errors included), without running them where it can."""
        with sandbox_errors():
            return await collect_tests(self._sandbox, timeout=timeout)

    def leave_out(self, test_ids: list[str]) -> None:
        """From now on, count these tests' failures as skipped (tests that need the network, offline.py)."""
        self._left_out.update(test_ids)

    async def run_spectrum(self, test_ids: list[str], *, seconds: float = 60.0) -> Spectrum:
        """The tests (and their files' other tests) under coverage; a note instead when it cannot run."""
        try:
            return await run_spectrum(self._sandbox, test_ids, seconds=seconds)
        except SandboxError as exc:  # the ranking works without it
            return Spectrum(note=str(exc))

    async def compute(self, expression: str, seconds: float = 10.0) -> str | None:
        """The repr of a python expression evaluated in the sandbox, with `math` and the builtins only: python's
        isolated mode keeps the project off its path. None when it fails, runs long or prints nothing."""
        program = "import math, sys; print(repr(eval(sys.argv[1], {'math': math})))"
        try:
            result = await self._sandbox.exec(["python3", "-I", "-c", program, expression], timeout=seconds)
        except SandboxError:
            return None
        rows = result.stdout.strip().splitlines()
        return rows[-1] if result.ok and rows else None

    async def run_command(self, argv: list[str], *, seconds: float,
                          env: Mapping[str, str] | None = None) -> str | None:
        """What a command run in the workspace printed (stdout, then stderr); None when it could not run or
        ran out of time (the bench's correctness probe, bench/correctness.py)."""
        try:
            result = await self._sandbox.exec(argv, timeout=seconds, env=env)
        except SandboxError:
            return None
        return None if result.timed_out else result.stdout + result.stderr

    def refusal(self, packages: list[str]) -> Refused | None:
        """Why the sandbox would refuse these specs outright (an option, a URL, a path), else None."""
        try:
            check = check_pip_specs if self.template.package_manager == "pip" else check_packages
            check(packages)
        except SandboxError as exc:
            return Refused(str(exc))
        return None

    async def install(self, packages: list[str]) -> ExecResult | Refused:
        try:
            result = await self._sandbox.install(packages)
        except SandboxError as exc:  # `-e .`, a spec with shell characters: said to the model, not a crash
            return Refused(str(exc))
        if result.ok:
            await self._on_extra(lambda box: box.install(packages))
        return result

    async def run_setup(self, command: str) -> ExecResult | Refused:
        try:
            result = await self._sandbox.run_setup(command)
        except SandboxError as exc:
            return Refused(str(exc))
        if result.ok:
            await self._on_extra(lambda box: box.run_setup(command))
        return result

    async def environment(self) -> EnvironmentMark:
        """A mark of every sandbox's environment as it is now (installs, setup commands)."""
        with sandbox_errors():
            return EnvironmentMark(tuple([(box, await box.environment()) for box in [self._sandbox, *self._extra]]))

    async def restore_environment(self, mark: EnvironmentMark) -> None:
        """Every sandbox's environment as it was at `mark` (one that left the pool since is left alone)."""
        with sandbox_errors():
            for box, env in mark.boxes:
                if box is self._sandbox or box in self._extra:
                    await box.restore_environment(env)

    async def _on_extra(self, change: Callable[[Sandbox], Any]) -> None:
        """The same environment change on every other sandbox; one where it fails leaves the pool."""
        for box in list(self._extra):
            try:
                ok = (await change(box)).ok
            except SandboxError:
                ok = False
            if not ok:
                log.warning("a parallel sandbox could not take the environment change; it leaves the pool")
                self._extra.remove(box)
                self._free = None
                await box.close()


def check_own_command(command: str, report: TestReport) -> None:
    """A project's test command that cannot run, or never ends, is the user's to fix: GreenloopError.

    Checked on a sandbox's first run (before any change): later, a hang is a candidate's failure.
    """
    tail = "\n".join(report.raw.strip().splitlines()[-15:])
    if report.timed_out:
        raise GreenloopError(
            f"project.test_command `{command}` ran longer than {report.duration:.0f}s and was stopped. Make it "
            "finish on its own (a hung test, a prompt waiting for input, a watch mode) or raise "
            f"sandbox.test_timeout. Its output ended with:\n{tail}")
    if report.exit_code in (126, 127):
        raise GreenloopError(
            f"project.test_command `{command}` could not be run in the sandbox (exit code {report.exit_code}: "
            "not found or not executable). Fix the command, or bring its tools into the environment "
            f"(project.setup, project.image or .greenloop/Dockerfile). Its output:\n{tail}")


@dataclass
class Ports:
    llm: LLMClient
    sandbox: SandboxPort


def limits_from(settings: Settings) -> Limits:
    s = settings.sandbox
    return Limits(
        memory=s.memory,
        cpus=s.cpus,
        pids=s.pids,
        exec_timeout=s.exec_timeout,
        test_timeout=s.test_timeout,
        test_case_timeout=s.test_case_timeout,
        case_timeout_factor=s.case_timeout_factor,
        output_limit=s.output_limit,
    )


def read_workspace(root: Path) -> FileTree:
    """The workspace's files (`.skipped` says what was left out and why); GreenloopError if unreadable."""
    with sandbox_errors():
        return read_tree(root)


def choose_template(settings: Settings, files: Mapping[str, bytes], template: str | None = None) -> str:
    """The template named (argument, then settings), else detected from the files."""
    name = template or (settings.sandbox.template if settings.sandbox.template != "auto" else None)
    if name:
        return name
    with sandbox_errors():
        return detect_template(files)


def project_env(settings: Settings, workspace: Path | None) -> ProjectEnv:
    """The project's own test command and environment (`project.*`, its Dockerfile); empty: the template's."""
    p = settings.project
    dockerfile = ""
    context: tuple[tuple[str, bytes, int], ...] = ()
    if workspace is not None and not p.image and p.dockerfile:  # the editor's "" is no Dockerfile
        with sandbox_errors():
            dockerfile, context = read_dockerfile(workspace, p.dockerfile)
    return ProjectEnv(test_command=p.test_command or "", test_report=p.test_report or "", setup=tuple(p.setup),
                      image=p.image or "", dockerfile=dockerfile, dockerfile_name=p.dockerfile, context=context)


@asynccontextmanager
async def open_sandbox_for(settings: Settings, template: str, *, label: str | None = None,
                           workspace: Path | None = None) -> AsyncIterator[SandboxPort]:
    """Started sandboxes (`sandbox.workers`, over `sandbox.engines`), all closed however the block ends.

    `workspace` is where the project's own Dockerfile is looked for (`project.dockerfile`).
    """
    project = project_env(settings, workspace)
    engines: list[str | None] = list(settings.sandbox.engines) or [None]
    async with AsyncExitStack() as stack:
        started: list[Sandbox] = []
        skipped: list[str] = []
        down: set[str | None] = set()
        for slot in range(settings.sandbox.workers + len(engines) - 1):  # room for engines that are down
            if len(started) == settings.sandbox.workers or len(down) == len(engines):
                break
            engine = engines[slot % len(engines)]
            if engine in down:
                continue
            try:
                started.append(await stack.enter_async_context(_started(settings, template, label, engine, project)))
            except SandboxError as exc:
                if engine is None or len(engines) == 1:
                    raise GreenloopError(str(exc)) from exc
                down.add(engine)
                skipped.append(f"engine {engine} skipped: {exc}")
                log.warning("sandbox engine %s is skipped: %s", engine, exc)
        if not started:
            raise GreenloopError("No sandbox engine in sandbox.engines answers: " + "; ".join(skipped))
        gate = InstallGate.of(settings.sandbox.install_undeclared, settings.sandbox.allow_install)
        yield SandboxPort(started[0], tuple(started[1:]), tuple(skipped), gate=gate)


@asynccontextmanager
async def _started(settings: Settings, template: str, label: str | None, engine: str | None,
                   project: ProjectEnv) -> AsyncIterator[Sandbox]:
    """One started sandbox on `engine`, closed when the block ends (SandboxError when it cannot start)."""
    backend = "docker" if engine is not None else settings.sandbox.backend
    sandbox = open_sandbox(template, backend=backend, limits=limits_from(settings), label=label, engine=engine,
                           project=project, warm_runs=settings.sandbox.warm_runs)
    await sandbox.start()
    try:
        yield sandbox
    finally:
        await sandbox.close()


@asynccontextmanager
async def open_ports(
    settings: Settings,
    template: str,
    *,
    sink: Callable[[Any], None] | None = None,
    label: str | None = None,
    workspace: Path | None = None,
) -> AsyncIterator[Ports]:
    """Model client + sandbox for one run; both are closed however the run ends."""
    async with open_llm(settings, sink=sink) as llm, \
            open_sandbox_for(settings, template, label=label, workspace=workspace) as sandbox:
        yield Ports(llm=llm, sandbox=sandbox)


def reap_leftovers(settings: Settings) -> int:
    """Remove sandbox containers whose owner process is gone, on every engine of the settings that answers."""
    from greenloop_sandbox import docker_available
    from greenloop_sandbox.engine import docker_client
    from greenloop_sandbox.reaper import reap_containers

    removed = 0
    engines: list[str | None] = list(settings.sandbox.engines) or [None]
    for engine in engines:
        if settings.sandbox.backend == "local" or (engine is None and not docker_available()):
            continue
        try:
            removed += len(reap_containers(docker_client(engine)))
        except SandboxError as exc:
            log.warning("reaping on engine %s skipped: %s", engine or "default", exc)
    return removed
