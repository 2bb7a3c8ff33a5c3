"""The Docker sandbox's environment as image layers: each install or setup command a cached layer it moves onto."""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from greenloop_sandbox import images, packages, pip_resolve, sdist_build
from greenloop_sandbox.base import ExecResult, InstalledFile, InstallResult, Limits
from greenloop_sandbox.docker_container import WORKSPACE
from greenloop_sandbox.output import cap_text
from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.tree import SyncState
from greenloop_sandbox.workspace_tar import write_tree

# coreutils `timeout`'s exit code; it bounds a setup command's build step
# (docs/decisions/2026-11-sandbox-templates-and-images.md)
_TIMED_OUT = 124
INSTALLED_LABEL = "greenloop.installed"  # a pip layer's InstalledFile records (JSON), read back when it is cached


class DockerLayers:
    """The environment part of `DockerSandbox` (which sets the attributes below and runs the container)."""

    template: EnvTemplate
    limits: Limits
    image: str | None
    _start_image: str | None
    _client: Any
    _files: dict[str, bytes]
    _state: SyncState
    _lock: asyncio.Lock

    if TYPE_CHECKING:
        def _require(self) -> None: ...

        async def _switch(self, tag: str) -> None: ...

    async def install(self, packages_: list[str]) -> ExecResult:
        manager = self.template.package_manager
        pkgs = packages.check_pip_specs(packages_) if manager == "pip" else packages.check_packages(packages_)
        # pip layers from before wheels-only installs (no records, maybe sdists built on the host) are not reused
        step = f"install:{manager}:{'wheels-only:' if manager == 'pip' else ''}{' '.join(pkgs)}"
        result = await self._add_layer(step, lambda ctx: self._install_layer(ctx, manager, pkgs))
        if manager == "pip" and result.ok and not isinstance(result, InstallResult) and self.image is not None:
            labels = await asyncio.to_thread(_image_labels, self._client, self.image)  # a cached layer
            result = InstallResult(result.exit_code, result.stdout, result.stderr, result.duration,
                                   files=_files_from_label(labels.get(INSTALLED_LABEL, "")))
        return result

    async def run_setup(self, command: str) -> ExecResult:
        snap = hashlib.sha256(repr(sorted(self._state.hashes.items())).encode()).hexdigest()[:16]
        step = f"run:{command}:{snap}"
        res = await self._add_layer(step, lambda ctx: self._setup_layer(ctx, command))
        if not res.ok and f"non-zero code: {_TIMED_OUT}" in res.stdout:
            why = f"the command ran longer than {self.limits.exec_timeout:.0f}s and was stopped\n"
            return replace(res, stderr=why + res.stderr, timed_out=True)
        return res

    async def environment(self) -> str:
        return self.image or ""  # each install or setup command is a layer: the image says the environment

    async def restore_environment(self, mark: str) -> None:
        async with self._lock:
            self._require()
            if mark and mark != self.image:
                await self._switch(mark)

    async def _add_layer(self, step: str, make: Callable[[Path], Awaitable[ExecResult]]) -> ExecResult:
        """Build (or reuse) the layer `step` on the current image and move the session onto it."""
        async with self._lock:
            self._require()
            assert self.image is not None
            tag = images.layer_tag(self.image, step)
            cached = await asyncio.to_thread(images.image_exists, self._client, tag)
            result = ExecResult(0, f"cached layer {tag}\n", "", 0.0)
            if not cached:
                with tempfile.TemporaryDirectory(prefix="greenloop-layer-") as tmp:
                    made = await make(Path(tmp))
                    result = made
                    if made.exit_code == 0:
                        files = made.files if isinstance(made, InstallResult) else None
                        result = await self._build_layer(tag, Path(tmp), files)
                        if files is not None and result.exit_code == 0:
                            result = InstallResult(result.exit_code, result.stdout, result.stderr, result.duration,
                                                   files=files)
            if result.exit_code == 0:
                await self._switch(tag)
            return result

    async def _install_layer(self, ctx: Path, manager: str, pkgs: list[str]) -> ExecResult:
        assert self.image is not None
        dockerfile, folder = packages.layer_dockerfile(self.image, manager, pkgs)
        (ctx / folder).mkdir(exist_ok=True)
        if manager == "pip":
            with tempfile.TemporaryDirectory(prefix="greenloop-sdists-") as work:  # outside the build context
                wheels = await pip_resolve.resolve_wheels(pkgs, ctx / folder, Path(work), self._build_sdist)
            if wheels.ok:
                (ctx / "Dockerfile").write_text(dockerfile)
            return wheels
        dest = ctx / "resolve"
        dest.mkdir(exist_ok=True)
        for argv in packages.resolve_argv(manager, pkgs, dest):
            res = await packages.run_host(argv, cwd=dest)
            if res.exit_code != 0:
                return res
        if manager == "npm":
            (ctx / folder).rmdir()
            (dest / "node_modules").rename(ctx / folder)
        elif manager == "cargo":
            (ctx / folder).rmdir()
            (dest / "vendor").rename(ctx / folder)
        (ctx / "Dockerfile").write_text(dockerfile)
        return ExecResult(0, "", "", 0.0)

    async def _build_sdist(self, sdist: Path, build_wheels: Path, out: Path) -> ExecResult:
        """An sdist built into a wheel in a container of the sandbox's first image (sdist_build.py)."""
        assert self._start_image is not None
        return await sdist_build.build_wheel(self._client, self._start_image, sdist, build_wheels, out,
                                             limits=self.limits, timeout=self.limits.exec_timeout)

    async def _setup_layer(self, ctx: Path, command: str) -> ExecResult:
        assert self.image is not None
        await asyncio.to_thread(write_tree, ctx / "ws", self._files)
        (ctx / "Dockerfile").write_text(
            f"FROM {self.image}\nUSER root\nCOPY --chown=1000:1000 ws/ {WORKSPACE}/\n"
            f"RUN cd {WORKSPACE} && timeout -k 5 {self.limits.exec_timeout:.0f} sh -c {_shq(command)}"
            f" && chown -R 1000:1000 {WORKSPACE}\nUSER sandbox\n")
        return ExecResult(0, "", "", 0.0)

    async def _build_layer(self, tag: str, ctx: Path, installed: tuple[InstalledFile, ...] | None = None) -> ExecResult:
        dockerfile = await asyncio.to_thread((ctx / "Dockerfile").read_text)
        names = await asyncio.to_thread(lambda: [p for p in ctx.iterdir() if p.name != "Dockerfile"])
        files: dict[str, bytes | Path] = {p.name: p for p in names}
        loop = asyncio.get_running_loop()
        start = loop.time()
        labels = {INSTALLED_LABEL: json.dumps([asdict(f) for f in installed])} if installed is not None else None
        ok, text = await asyncio.to_thread(images.build_image, self._client, tag, dockerfile, files,
                                           memory=self.limits.memory, log_limit=self.limits.output_limit,
                                           labels=labels)
        out, cut = cap_text(text, self.limits.output_limit)
        return ExecResult(0 if ok else 1, out, "" if ok else out[-4000:], loop.time() - start, truncated=cut)


def _image_labels(client: Any, tag: str) -> dict[str, str]:
    try:
        return dict(client.images.get(tag).labels or {})
    except Exception:  # gone, or an engine that keeps no labels
        return {}


def _files_from_label(text: str) -> tuple[InstalledFile, ...]:
    try:
        rows = json.loads(text) if text else []
        return tuple(InstalledFile(**{**row, "modules": tuple(row.get("modules", ()))}) for row in rows)
    except (ValueError, TypeError):
        return ()


def _shq(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"

