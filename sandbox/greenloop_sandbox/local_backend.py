"""LocalSandbox: a temp copy of the workspace, commands in their own process group (weaker isolation)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from greenloop_sandbox.base import DEFAULT_LIMITS, ExecResult, InstallResult, Limits, Sandbox, SandboxError
from greenloop_sandbox.case_times import EarlyStop
from greenloop_sandbox.local_env import filtered_env, limits_preexec, probe_isolation
from greenloop_sandbox.output import CappedOutput, cap_text
from greenloop_sandbox.packages import check_packages, check_pip_specs, local_install_argv, run_host
from greenloop_sandbox.parsers import ParseInput, parse_report
from greenloop_sandbox.parsers.common import mark_timed_out
from greenloop_sandbox.pip_resolve import NO_WHEEL, SOURCE_ONLY, installed_from_report
from greenloop_sandbox.project import ProjectEnv
from greenloop_sandbox.reaper import process_start
from greenloop_sandbox.report import TestReport
from greenloop_sandbox.templates import TEMPLATES_DIR, EnvTemplate
from greenloop_sandbox.tree import SyncState, check_relpath, is_executable_text
from greenloop_sandbox.warm import WORKER_FILE, WarmRuns

log = logging.getLogger(__name__)
PREFIX = "greenloop-local-"


class LocalSandbox(Sandbox):
    """No container: isolation is a process group, rlimits and (where allowed) `unshare` namespaces.

    Weaker than Docker: commands see the host's filesystem and toolchains (with a
    filtered environment); rlimits are per process, and RLIMIT_NPROC does not bind root.
    """

    name = "local"

    def __init__(self, template: EnvTemplate, *, limits: Limits = DEFAULT_LIMITS, label: str | None = None,
                 project: ProjectEnv | None = None, warm_runs: bool = False) -> None:
        self.project = project or ProjectEnv()
        self.warm = WarmRuns(enabled=warm_runs)  # python test runs forked from a warm worker (warm.py)
        self._worker: asyncio.subprocess.Process | None = None
        self.template = self.project.apply(template)
        self.limits = limits
        self.label = label
        self.root: Path | None = None
        self.note = ""
        self.cases = self.new_case_limits(self._put_cases)
        self._state = SyncState()
        self._lock = asyncio.Lock()

    @property
    def workspace(self) -> Path:
        if self.root is None:
            raise SandboxError("The sandbox is not running: call `await sandbox.start()` first (or it was closed).")
        return self.root / "workspace"

    def workspace_dir(self) -> str | None:
        return None if self.root is None else str(self.workspace)

    def support_dir(self) -> str:
        return str(TEMPLATES_DIR / self.template.name)  # the template's runners, from the package

    async def start(self) -> None:
        iso = await asyncio.to_thread(probe_isolation)
        unused = ("project.image, .greenloop/Dockerfile and project.setup are for the Docker backend; "
                  "here the tests run with this machine's tools") if self.project.builds_image else ""
        self.note = "; ".join(n for n in (iso.note, unused) if n)
        await asyncio.to_thread(reap_local_dirs)
        self.cases.forget_file()  # a new folder has no limits file yet
        root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{process_start(os.getpid())}-"))
        for sub in ("workspace", "report", "target", "site-packages"):
            (root / sub).mkdir()
        self.root = root

    async def close(self) -> None:
        await asyncio.shield(self.stop_worker())
        root, self.root = self.root, None
        if root is not None:
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, root, True))

    async def sync(self, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()) -> int:
        async with self._lock:
            ws = self.workspace
            changed, gone = self._state.plan(files, deleted)
            await asyncio.to_thread(_write_files, ws, changed, gone)
            self._state.apply(changed, gone)
            return len(changed)

    async def exec(self, command: str | list[str], *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                   env: Mapping[str, str] | None = None, workdir: str | None = None) -> ExecResult:
        async with self._lock:
            return await self._run(command, timeout or self.limits.exec_timeout, env, workdir)

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        assert self.root is not None
        env = filtered_env(os.environ)
        site = str(self.root / "site-packages")
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.update(CARGO_TARGET_DIR=str(self.root / "target"), PYTHONDONTWRITEBYTECODE="1")
        env.update(self.template.env)
        env.update(extra or {})
        return env

    async def _run(self, command: str | list[str], timeout: float, env: Mapping[str, str] | None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                   workdir: str | None) -> ExecResult:
        cwd = self.workspace if not workdir or workdir == "." else self.workspace / check_relpath(workdir)
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        iso = probe_isolation()
        out, err = CappedOutput(self.limits.output_limit), CappedOutput(self.limits.output_limit)
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *iso.prefix, *argv, cwd=cwd, env=self._env(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
            preexec_fn=limits_preexec(self.limits))
        assert proc.stdout is not None and proc.stderr is not None
        readers = [asyncio.create_task(_pump(proc.stdout, out)), asyncio.create_task(_pump(proc.stderr, err))]
        timed_out = False
        try:
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
        finally:
            _kill_group(proc.pid)
            await asyncio.shield(_finish(proc, readers))
        if timed_out:
            err.feed(f"\n[greenloop: killed after {timeout:g}s timeout]\n".encode())
        code = proc.returncode if proc.returncode is not None else -9
        return ExecResult(137 if code < 0 else code, out.text(), err.text(), time.monotonic() - start,
                          timed_out=timed_out, truncated=out.truncated or err.truncated)

    async def run_tests(self, test_ids: list[str] | None = None, *, timeout: float | None = None,  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
                        stop: EarlyStop | None = None) -> TestReport:
        case_timeout, env = await self.case_limits(test_ids, stop)
        async with self._lock:
            assert self.root is not None
            report_dir = self.root / "report"
            report_path = self.template.report_path(str(report_dir), str(self.workspace))
            tests = self.template.test_argv(report_path, test_ids, case_timeout, self.support_dir())

            async def once(command: str) -> tuple[ExecResult, str | None]:
                shutil.rmtree(report_dir, ignore_errors=True)
                report_dir.mkdir()
                if self.template.workspace_report:  # a report left by an earlier run is not this run's
                    await asyncio.to_thread(_remove_file, report_path)
                res = await self._run(command, timeout or self.limits.test_timeout, env, None)
                return res, await asyncio.to_thread(_read_optional, report_path)

            res, text = await self.warm.run(self, tests, self.support_dir(), self._env(env), once)
        raw, _ = cap_text(res.stdout + ("\n" + res.stderr if res.stderr else ""), self.limits.output_limit)
        data = ParseInput(output=raw, report=text, exit_code=res.exit_code, root=str(self.workspace.resolve()))
        report = await asyncio.to_thread(parse_report, self.template.parser, data)
        report.raw, report.exit_code, report.timed_out, report.duration = raw, res.exit_code, res.timed_out, \
            res.duration
        if res.timed_out:
            mark_timed_out(report, res.duration, text or raw)
        self.case_times.record(report)
        return report

    # the warm worker (warm.py): a process of its own session, beside the commands -------------------------
    async def start_worker(self, env: dict[str, str]) -> int:
        await self.stop_worker()
        script, sock = self.worker_paths()
        state = str(Path(sock).with_name(f"state-{time.monotonic_ns()}.json"))  # never an earlier worker's
        self._worker = await asyncio.create_subprocess_exec(
            *probe_isolation().prefix, "python3", "-P", script, "serve", sock, self.support_dir(), state,
            cwd=self.workspace, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True, preexec_fn=limits_preexec(self.limits))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if await asyncio.to_thread(Path(state).is_file):
                return self._worker.pid  # its own session: its process group is its pid
            if self._worker.returncode is not None:
                raise SandboxError(f"the warm worker exited with code {self._worker.returncode} before it served")
            await asyncio.sleep(0.05)
        raise SandboxError("the warm worker did not serve within 30s")

    async def stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            _kill_group(worker.pid)
            await worker.wait()

    def worker_paths(self) -> tuple[str, str]:
        assert self.root is not None
        return str(WORKER_FILE), str(self.root / "warm" / "sock")

    async def _put_cases(self, data: bytes) -> str:
        assert self.root is not None
        path = self.root / "cases.json"
        await asyncio.to_thread(path.write_bytes, data)
        return str(path)

    async def install(self, packages: list[str]) -> ExecResult:
        """Wheels only for pip: an sdist would run its setup code on this machine, so it is refused with a
        message (docs/decisions/2026-11-no-host-package-code.md)."""
        manager = self.template.package_manager
        pkgs = check_pip_specs(packages) if manager == "pip" else check_packages(packages)
        async with self._lock:
            assert self.root is not None
            await self.warm.restart(self)  # what the worker imported may change
            res = await run_host(local_install_argv(manager, pkgs, self.root), cwd=self.root)
            if manager != "pip":
                return res
            report = await asyncio.to_thread(_read_optional, str(self.root / "pip-report.json"))
        if not res.ok and (no_wheel := NO_WHEEL.search(res.stderr + res.stdout)):
            return InstallResult(res.exit_code, res.stdout, SOURCE_ONLY.format(spec=no_wheel[1]), res.duration)
        site = self.root / "site-packages" if self.root is not None else None
        files = await asyncio.to_thread(installed_from_report, report, site) if res.ok and report else ()
        return InstallResult(res.exit_code, res.stdout, res.stderr, res.duration, res.timed_out, res.truncated, files)

    async def run_setup(self, command: str) -> ExecResult:
        await self.warm.restart(self)  # what the worker imported may change
        return await self.exec(command)

    async def environment(self) -> str:
        """The installed folders as they are now, kept as hard links under `environments/<n>` (pip and npm
        write new files, never into the old ones, so a link keeps the file as it was)."""
        async with self._lock:
            assert self.root is not None
            marks = self.root / "environments"
            mark = marks / str(len(list(marks.iterdir())) if marks.exists() else 0)
            await asyncio.to_thread(_link_tree, self.root, mark)
            return mark.name

    async def restore_environment(self, mark: str) -> None:
        async with self._lock:
            assert self.root is not None
            if mark:
                await asyncio.to_thread(_link_tree, self.root / "environments" / mark, self.root)


_INSTALLED = ("site-packages", "node_modules")  # the folders an install writes (local_install_argv)


def _link_tree(source: Path, dest: Path) -> None:
    """`dest`'s installed folders made those of `source`, file by file as hard links."""
    for name in _INSTALLED:
        shutil.rmtree(dest / name, ignore_errors=True)
        if (source / name).is_dir():
            shutil.copytree(source / name, dest / name, symlinks=True, copy_function=os.link)
        else:
            (dest / name).mkdir(parents=True, exist_ok=True)


def _remove_file(path: str) -> None:
    with contextlib.suppress(OSError):
        Path(path).unlink()


def _read_optional(path: str) -> str | None:
    return Path(path).read_text(errors="replace") if path and Path(path).is_file() else None


async def _pump(stream: asyncio.StreamReader, sink: CappedOutput) -> None:
    while chunk := await stream.read(65536):
        sink.feed(chunk)


async def _finish(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
    """Reap the process; stop reading when an escaped straggler keeps the pipes open."""
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    await proc.wait()
    _, pending = await asyncio.wait(readers, timeout=2.0)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _write_files(ws: Path, changed: Mapping[str, bytes], gone: list[str]) -> None:
    for rel in gone:
        path = _safe_path(ws, rel)
        if path.is_symlink() or path.is_file():
            path.unlink()
    for rel, data in changed.items():
        path = _safe_path(ws, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.write_bytes(data)
        if is_executable_text(data):
            path.chmod(0o755)


def _safe_path(ws: Path, rel: str) -> Path:
    """ws/rel, after removing any symlink a command planted on the way (never write through one)."""
    path = ws
    for part in Path(check_relpath(rel)).parts[:-1]:
        path = path / part
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
    return path / Path(rel).name


def reap_local_dirs() -> list[Path]:
    """Remove temp folders of local sandboxes whose owner process is gone."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        parts = path.name[len(PREFIX):].split("-")
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        if process_start(int(parts[0])) != parts[1]:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
