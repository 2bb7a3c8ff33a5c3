"""Health checks of the sandbox side: engine, template images, host toolchains (rows for `greenloop doctor`)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

from greenloop_sandbox import engine, images
from greenloop_sandbox.local_env import probe_isolation
from greenloop_sandbox.templates import load_template, template_names


@dataclass(frozen=True)
class Check:
    """One row of `greenloop doctor`: what was checked, whether it is fine, and what to do if not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Section:
    """A titled group of checks."""

    title: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def engine_checks() -> list[Check]:
    if not engine.docker_available():
        return [Check("docker engine", False, f"not reachable: {engine.last_error() or 'no answer'}",
                      "start it (`dockerd --bridge=none --iptables=false &` as root, or `systemctl start docker`); "
                      "until then greenloop uses the local sandbox (--sandbox local)")]
    return [Check("docker engine", True, f"reachable, version {engine.engine_version()}")]


def image_checks() -> list[Check]:
    if not engine.docker_available():
        return [Check("images", False, "unknown (no engine)", "start Docker, then `greenloop sandbox build-images`")]
    client = engine.docker_client()
    rows = []
    base = images.base_tag()
    rows.append(_image_row("base", client, base))
    for name in template_names():
        rows.append(_image_row(name, client, images.template_tag(load_template(name))))
    return rows


def _image_row(name: str, client: Any, tag: str) -> Check:
    size = images.image_size(client, tag) if images.image_exists(client, tag) else None
    if size is None:
        return Check(f"image {name}", False, f"{tag} not built",
                     f"greenloop sandbox build-images{'' if name == 'base' else ' --template ' + name}")
    return Check(f"image {name}", True, f"{tag} ({size / 1e6:.0f} MB)")


def toolchain_checks() -> list[Check]:
    """Host tools: what the local backend runs with, and what image builds and installs need."""
    rows = []
    for name in template_names():
        for command in load_template(name).toolchain:
            rows.append(_tool_row(f"{name}: {command.split()[0]}", command))
    rows.append(_tool_row("debootstrap (base image builds)", "debootstrap --version"))
    rows.append(_tool_row("npm (node package installs)", "npm --version"))
    iso = probe_isolation()
    rows.append(Check("local isolation (unshare)", iso.network, iso.note,
                      "" if iso.network else "allow unprivileged user namespaces, or use Docker"))
    return rows


def _tool_row(name: str, command: str) -> Check:
    argv = command.split()
    if shutil.which(argv[0]) is None:
        return Check(name, False, f"{argv[0]} not found on PATH", f"install {argv[0]} (needed by the local sandbox)")
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check(name, False, f"{command}: {exc}", f"check your {argv[0]} installation")
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return Check(name, proc.returncode == 0, text[0] if text else f"exit {proc.returncode}",
                 "" if proc.returncode == 0 else f"`{command}` fails; check your installation")


def sandbox_sections() -> list[Section]:
    return [Section("Docker engine", engine_checks()), Section("Sandbox images", image_checks()),
            Section("Host toolchains", toolchain_checks())]
