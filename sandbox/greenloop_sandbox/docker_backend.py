"""DockerSandbox: one warm, locked-down container per session, reused through `exec`.

It holds the container, the lock and the workspace it synced; its collaborators are objects it hands what
they need: the environment's image layers (`docker_layers.LayerCache`), the per-test limits
(`case_limits.CaseLimits`), the warm worker (`warm.WarmRuns`, which it serves as `WorkerHost`) and the
channel to its agent (`docker_channel.SandboxChannel`). Starting and removing containers and copying a file
in or out are `docker_container.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import uuid
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from greenloop_sandbox import docker_channel, docker_warm, images
from greenloop_sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, Sandbox, SandboxError
from greenloop_sandbox.case_times import EarlyStop
from greenloop_sandbox.docker_container import (
    WORKSPACE,
    put_file,
    quietly,
    read_file,
    remove_container,
    remove_named,
    run_container,
    ulimit,
)
from greenloop_sandbox.docker_exec import USER, run_in_container
from greenloop_sandbox.docker_layers import LayerCache
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.output import cap_text
from greenloop_sandbox.parsers import ParseInput, parse_report
from greenloop_sandbox.parsers.common import mark_timed_out
from greenloop_sandbox.project import ProjectEnv
from greenloop_sandbox.project_images import build_project_image
from greenloop_sandbox.reaper import owner_labels, reap_containers
from greenloop_sandbox.report import TestReport
from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.transfer import template_image_on
from greenloop_sandbox.tree import SyncState, check_relpath
from greenloop_sandbox.warm import SPARE_ENV, WarmRuns
from greenloop_sandbox.workspace_tar import file_mode, tar_files

log = logging.getLogger(__name__)

REPORT_DIR = "/tmp/greenloop-report"
CASES_FILE = "greenloop-cases.json"  # per-test limits and the early stop, for the template's runner (case_times.py)
_reaped: set[str | None] = set()  # engines whose leftovers this process has reaped


class DockerSandbox(Sandbox):
    """Strong isolation: network none, non-root, memory/cpu/pids limits, no host env, no socket."""

    name = "docker"

    def __init__(self, template: EnvTemplate, *, limits: Limits = DEFAULT_LIMITS, label: str | None = None,
                 project: ProjectEnv | None = None, engine: str | None = None, warm_runs: bool = False) -> None:
        self.project = project or ProjectEnv()
        self.warm = WarmRuns(enabled=warm_runs)  # python test runs forked from a warm worker (warm.py)
        self.template = self.project.apply(template)
        self.limits = limits
        self.label = label
        self.engine = engine  # a Docker engine URL; None: the environment's (DOCKER_HOST or the local socket)
        self.session_id = uuid.uuid4().hex[:12]
        self.image: str | None = None
        self.cases = self.new_case_limits(self._put_cases)
        self._layers: LayerCache | None = None  # the environment's layers, once started on an engine
        self._client: Any = None
        self._container: Any = None
        self._state = SyncState()
        self._files: dict[str, bytes] = {}
        self._lock = asyncio.Lock()
        self._channel = docker_channel.SandboxChannel(self._channel_broke)  # open while the warm worker runs

    def workspace_dir(self) -> str | None:
        return WORKSPACE if self._container is not None else None

    # lifecycle -----------------------------------------------------------------
    async def start(self) -> None:
        self._client = await asyncio.to_thread(docker_client, self.engine)
        if self.engine not in _reaped:
            _reaped.add(self.engine)
            removed = await asyncio.to_thread(reap_containers, self._client)
            if removed:
                log.info("removed %d leftover sandbox container(s) of crashed sessions", len(removed))
        if self.engine is not None:  # another engine: the template image from the default one (no registry)
            await asyncio.to_thread(template_image_on, self._client, self.template, _default_client())
        if self.project.builds_image:
            self.image = await asyncio.to_thread(build_project_image, self._client, self.template, self.project)
        else:
            self.image = await asyncio.to_thread(images.build_template_image, self._client, self.template)
        self._layers = LayerCache(self._client, self.limits, start_image=self.image)
        try:
            await self._start_container()
        except BaseException:
            await asyncio.shield(asyncio.to_thread(remove_named, self._client, f"greenloop-{self.session_id}"))
            raise

    async def _start_container(self) -> None:
        assert self.image is not None
        self.cases.forget_file()  # a new container has no limits file yet
        self.warm.worker_gone()  # ... and no warm worker
        self._channel.drop()  # ... nor channel
        ncpu = os.cpu_count() or 1
        kwargs: dict[str, Any] = dict(
            command=["sleep", "infinity"], detach=True, init=True, user="0:0", network_mode="none",
            mem_limit=self.limits.memory, memswap_limit=self.limits.memory,
            nano_cpus=int(min(self.limits.cpus, ncpu) * 1e9), pids_limit=self.limits.pids,
            cap_drop=["ALL"], security_opt=["no-new-privileges"], working_dir=WORKSPACE,
            labels=owner_labels(self.session_id, self.label), name=f"greenloop-{self.session_id}",
            environment={"HOME": "/home/sandbox"}, ulimits=[ulimit("fsize", self.limits.file_size)],
        )
        run = asyncio.ensure_future(asyncio.to_thread(run_container, self._client, self.image, kwargs))
        try:
            self._container = await asyncio.shield(run)
        except asyncio.CancelledError:
            self._container = await quietly(run)
            await self.close()
            raise

    async def close(self) -> None:
        container, self._container = self._container, None
        self._channel.drop()
        if container is None:
            return
        removal = asyncio.ensure_future(asyncio.to_thread(remove_container, container))
        try:
            await asyncio.shield(removal)
        except asyncio.CancelledError:
            await quietly(removal)
            raise

    async def _switch(self, tag: str) -> None:
        """Replace the warm container with one from `tag` and put the workspace back."""
        old, self._container = self._container, None
        if old is not None:
            await asyncio.to_thread(remove_container, old)
        self.image = tag
        await self._start_container()
        files, self._state = self._files, SyncState()
        if files:
            data = await asyncio.to_thread(tar_files, files)
            await asyncio.to_thread(self._container.put_archive, WORKSPACE, data)
            self._state.apply(files, [])

    def _require(self) -> LayerCache:
        """The environment's layers of a running sandbox (SandboxError when it is not running)."""
        if self._container is None or self._layers is None:
            raise SandboxError("The sandbox is not running: call `await sandbox.start()` first (or it was closed).")
        return self._layers

    # workspace -------------------------------------------------------------------
    async def sync(self, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()) -> int:
        async with self._lock:
            self._require()
            changed, gone = self._state.plan(files, deleted)
            if changed and not await self._channel.write(WORKSPACE, changed, file_mode):
                data = await asyncio.to_thread(tar_files, changed)
                await asyncio.to_thread(self._container.put_archive, WORKSPACE, data)
            if gone:
                res = await self._run(["rm", "-f", "--", *gone], timeout=60)
                if res.exit_code != 0:
                    raise SandboxError(f"Removing deleted files in the sandbox failed: {res.stderr[-500:]}")
            self._state.apply(changed, gone)
            self._files = {p: d for p, d in files.items() if p not in deleted}
            return len(changed)

    # the environment (docker_layers.py) -----------------------------------------------
    async def install(self, packages_: list[str]) -> ExecResult:
        async with self._lock:
            layers = self._require()
            assert self.image is not None
            result, tag = await layers.install(self.image, self.template.package_manager, packages_)
            if tag is not None:
                await self._switch(tag)
            return result

    async def run_setup(self, command: str) -> ExecResult:
        async with self._lock:
            layers = self._require()
            assert self.image is not None
            result, tag = await layers.setup(self.image, command, self._files, self._state.hashes)
            if tag is not None:
                await self._switch(tag)
            return result

    async def environment(self) -> str:
        return self.image or ""  # each install or setup command is a layer: the image says the environment

    async def restore_environment(self, mark: str) -> None:
        async with self._lock:
            self._require()
            if mark and mark != self.image:
                await self._switch(mark)

    # commands ----------------------------------------------------------------------
    async def exec(self, command: str | list[str], *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                   env: Mapping[str, str] | None = None, workdir: str | None = None) -> ExecResult:
        async with self._lock:
            self._require()
            return await self._run(command, timeout=timeout or self.limits.exec_timeout, env=env, workdir=workdir)

    async def _run(self, command: str | list[str], *, timeout: float, env: Mapping[str, str] | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                   workdir: str | None = None) -> ExecResult:
        cwd = WORKSPACE if not workdir or workdir == "." else str(PurePosixPath(WORKSPACE, check_relpath(workdir)))
        return await run_in_container(self._client, self._container.id, command, timeout=timeout,
                                      env=self._command_env(env), workdir=cwd, output_limit=self.limits.output_limit)

    def _command_env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        full_env = {**self.template.env, "HOME": "/home/sandbox", **(env or {})}
        spare = [str(g) for g in (self.warm.pgid, self._channel.pgid) if g is not None]
        if spare:  # the cleanup after the command spares the warm worker and the channel's agent
            full_env[SPARE_ENV] = " ".join(spare)
        return full_env

    async def run_tests(self, test_ids: list[str] | None = None, *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                        stop: EarlyStop | None = None) -> TestReport:
        report_path = self.template.report_path(REPORT_DIR, WORKSPACE)
        case_timeout, env = await self.case_limits(test_ids, stop)
        stale = f"rm -f {shlex.quote(report_path)}; " if self.template.workspace_report else ""
        tests = self.template.test_argv(report_path, test_ids, case_timeout)

        async def once(command: str) -> tuple[ExecResult, str | None]:
            full = f"rm -rf {REPORT_DIR}; mkdir -p {REPORT_DIR}; {stale}{command}"
            seconds = timeout or self.limits.test_timeout
            by_channel = await self._channel.run(full, timeout=seconds, env=self._command_env(env), workdir=WORKSPACE,
                                                 output_limit=self.limits.output_limit, read=report_path)
            if by_channel is not None:
                return by_channel
            res = await self._run(full, timeout=seconds, env=env)
            return res, await asyncio.to_thread(self._read_file, report_path) if report_path else None

        async with self._lock:
            self._require()
            run_env = {**self.template.env, "HOME": "/home/sandbox", **env}
            res, report_text = await self.warm.run(self, tests, self.support_dir(), run_env, once)
        report = await asyncio.to_thread(_build_report, self.template, res, report_text, self.limits.output_limit)
        self.case_times.record(report)
        return report

    # the warm worker (warm.py, docker_warm.py); called with the lock held ---------------------------------
    async def start_worker(self, env: dict[str, str]) -> int:
        pgid = await asyncio.to_thread(docker_warm.start_worker_blocking, self._client, self._container, env,
                                       self.support_dir(), WORKSPACE, self._read_file)
        await self._channel.open(self._client, self._container.id, docker_warm.AGENT)
        return pgid

    async def stop_worker(self) -> None:
        self._channel.drop()
        await self._run("true", timeout=30)  # no GREENLOOP_SPARE: the cleanup after it kills every process

    def _channel_broke(self) -> None:
        self.warm.worker_gone()  # killed with the channel's agent: the next warm run starts a new worker and channel

    def worker_paths(self) -> tuple[str, str]:
        return docker_warm.SCRIPT, docker_warm.SOCKET

    async def _put_cases(self, data: bytes) -> str:
        async with self._lock:
            self._require()
            return await asyncio.to_thread(put_file, self._container, "/tmp", CASES_FILE, data)

    def _read_file(self, path: str) -> str | None:
        return read_file(self._container, path)


def _default_client() -> Any:
    """The environment's engine, when it answers: the source of images another engine lacks."""
    try:
        return docker_client()
    except SandboxError:
        return None


def _build_report(template: EnvTemplate, res: ExecResult, report_text: str | None, limit: int) -> TestReport:
    raw, _ = cap_text(res.stdout + ("\n" + res.stderr if res.stderr else ""), limit)
    report = parse_report(template.parser, ParseInput(output=raw, report=report_text, exit_code=res.exit_code,
                                                      root=WORKSPACE))
    report.raw, report.exit_code, report.timed_out = raw, res.exit_code, res.timed_out
    report.duration = res.duration
    if res.timed_out:
        mark_timed_out(report, res.duration, report_text or raw)
    return report


__all__ = ["USER", "DockerSandbox"]
