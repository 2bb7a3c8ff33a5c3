"""The Docker sandbox's environment as image layers: each install or setup command a cached layer, built once."""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from greenloop_sandbox import images, packages, pip_resolve, sdist_build
from greenloop_sandbox.docker_container import WORKSPACE
from greenloop_sandbox.output import cap_text
from greenloop_sandbox.values import ExecResult, InstalledFile, InstallResult, Limits
from greenloop_sandbox.workspace_tar import write_tree

# coreutils `timeout`'s exit code; it bounds a setup command's build step
# (docs/decisions/2026-11-sandbox-templates-and-images.md)
_TIMED_OUT = 124
INSTALLED_LABEL = "greenloop.installed"  # a pip layer's InstalledFile records (JSON), read back when it is cached


class LayerCache:
    """The layers of one sandbox's environment on one Docker engine: each built once (or found built), by tag.

    It builds and names layers; it does not move the session onto one. Each of `install` and `setup` returns
    its result and the tag to move onto (None when it failed): the sandbox starts its container from that tag.
    """

    def __init__(self, client: Any, limits: Limits, *, start_image: str) -> None:
        self.client = client
        self.limits = limits
        self.start_image = start_image  # the image before any layer: sdists are built from it

    async def install(self, image: str, manager: str, packages_: list[str]) -> tuple[ExecResult, str | None]:
        """The layer on `image` with `packages_` installed by `manager` (a pip layer's result says what it put in)."""
        pkgs = packages.check_pip_specs(packages_) if manager == "pip" else packages.check_packages(packages_)
        # pip layers from before wheels-only installs (no records, maybe sdists built on the host) are not reused
        step = f"install:{manager}:{'wheels-only:' if manager == 'pip' else ''}{' '.join(pkgs)}"
        result, tag = await self._layer(image, step, lambda ctx: self._install_layer(ctx, image, manager, pkgs))
        if manager == "pip" and tag is not None and not isinstance(result, InstallResult):  # a cached layer
            labels = await asyncio.to_thread(_image_labels, self.client, tag)
            result = InstallResult(result.exit_code, result.stdout, result.stderr, result.duration,
                                   files=_files_from_label(labels.get(INSTALLED_LABEL, "")))
        return result, tag

    async def setup(self, image: str, command: str, files: Mapping[str, bytes],
                    hashes: Mapping[str, str]) -> tuple[ExecResult, str | None]:
        """The layer on `image` where `command` ran on the workspace `files` (`hashes`: theirs, naming the layer)."""
        snap = hashlib.sha256(repr(sorted(hashes.items())).encode()).hexdigest()[:16]
        step = f"run:{command}:{snap}"
        res, tag = await self._layer(image, step, lambda ctx: self._setup_layer(ctx, image, command, files))
        if not res.ok and f"non-zero code: {_TIMED_OUT}" in res.stdout:
            why = f"the command ran longer than {self.limits.exec_timeout:.0f}s and was stopped\n"
            return replace(res, stderr=why + res.stderr, timed_out=True), tag
        return res, tag

    async def _layer(self, image: str, step: str,
                     make: Callable[[Path], Awaitable[ExecResult]]) -> tuple[ExecResult, str | None]:
        """Build (or reuse) the layer `step` on `image`: the result, and its tag when there is one."""
        tag = images.layer_tag(image, step)
        cached = await asyncio.to_thread(images.image_exists, self.client, tag)
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
        return result, tag if result.exit_code == 0 else None

    async def _install_layer(self, ctx: Path, image: str, manager: str, pkgs: list[str]) -> ExecResult:
        dockerfile, folder = packages.layer_dockerfile(image, manager, pkgs)
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
        return await sdist_build.build_wheel(self.client, self.start_image, sdist, build_wheels, out,
                                             limits=self.limits, timeout=self.limits.exec_timeout)

    async def _setup_layer(self, ctx: Path, image: str, command: str, files: Mapping[str, bytes]) -> ExecResult:
        await asyncio.to_thread(write_tree, ctx / "ws", files)
        (ctx / "Dockerfile").write_text(
            f"FROM {image}\nUSER root\nCOPY --chown=1000:1000 ws/ {WORKSPACE}/\n"
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
        ok, text = await asyncio.to_thread(images.build_image, self.client, tag, dockerfile, files,
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

