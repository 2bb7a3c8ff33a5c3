"""Sandbox images without a registry: a debootstrap base, template images, cached package layers.

Every image is tagged by a hash of its recipe, so an existing tag is never
rebuilt: `greenloop/base:<hash>` (debootstrap minbase rootfs + `docker import`),
`greenloop/<template>:<hash>` (the template's Dockerfile on that base, built with
the host network), `greenloop/layer:<hash>` (packages or setup commands on top,
built offline).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from greenloop_sandbox.output import CappedOutput
from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.values import SandboxError

log = logging.getLogger(__name__)

SUITE = "bookworm"
DEFAULT_MIRROR = os.environ.get("GREENLOOP_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BASE_RECIPE_VERSION = "1"
IMAGE_LABEL = "greenloop.image"

Progress = Callable[[str], None]


def base_tag(mirror: str = DEFAULT_MIRROR) -> str:
    recipe = f"{BASE_RECIPE_VERSION}|{SUITE}|minbase|{mirror}"
    return f"greenloop/base:{SUITE}-{_short(recipe)}"


def template_tag(template: EnvTemplate, mirror: str = DEFAULT_MIRROR) -> str:
    return f"greenloop/{template.name}:{_short(base_tag(mirror) + template.recipe_hash)}"


def layer_tag(parent: str, step: str) -> str:
    return f"greenloop/layer:{_short(parent + '|' + step)}"


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def image_exists(client: Any, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    """One image build at a time on this machine (parallel sessions share the cache)."""
    path = Path(tempfile.gettempdir()) / "greenloop-image-build.lock"
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_base(client: Any, *, force: bool = False, mirror: str = DEFAULT_MIRROR,
               progress: Progress = log.info) -> str:
    """The shared Debian minbase image (debootstrap + docker import); returns its tag."""
    tag = base_tag(mirror)
    with build_lock():
        if not force and image_exists(client, tag):
            return tag
        if shutil.which("debootstrap") is None:
            raise SandboxError("debootstrap is missing: install it (apt-get install debootstrap) and run as root.")
        if os.geteuid() != 0:
            raise SandboxError("Building the base image needs root (debootstrap); run `greenloop sandbox "
                               "build-images` as root once, or use --sandbox local.")
        work = Path(tempfile.mkdtemp(prefix="greenloop-rootfs-", dir="/var/tmp"))
        try:
            progress(f"debootstrap --variant=minbase {SUITE} ({mirror}) ...")
            _run(["debootstrap", "--variant=minbase", SUITE, str(work / "root"), mirror])
            progress("packing the rootfs and importing it into Docker ...")
            _run(["tar", "-C", str(work / "root"), "--numeric-owner", "-cf", str(work / "rootfs.tar"), "."])
            repo, _, version = tag.partition(":")
            client.api.import_image(
                src=str(work / "rootfs.tar"), repository=repo, tag=version,
                changes=["ENV LANG=C.UTF-8", 'CMD ["/bin/bash"]', f"LABEL {IMAGE_LABEL}=base"],
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return tag


def build_template_image(client: Any, template: EnvTemplate, *, force: bool = False,
                         mirror: str = DEFAULT_MIRROR, progress: Progress = log.info) -> str:
    """The template's image on the base (built with the host network); returns its tag."""
    tag = template_tag(template, mirror)
    if not force and image_exists(client, tag):
        return tag
    base = build_base(client, mirror=mirror, progress=progress)
    with build_lock():
        if not force and image_exists(client, tag):
            return tag
        progress(f"building {tag} from {base} ...")
        dockerfile = template.dockerfile + "".join(f"\nRUN {cmd}" for cmd in template.setup) + "\n"
        ok, text = build_image(client, tag, dockerfile, dict(template.support), network="host",
                               buildargs={"BASE": base}, labels={IMAGE_LABEL: template.name})
        if not ok:
            raise SandboxError(f"Building the {template.name} image failed:\n{text[-3000:]}")
        return tag


def build_image(client: Any, tag: str, dockerfile: str, files: Mapping[str, bytes | Path], *,
                network: str = "none", buildargs: dict[str, str] | None = None,
                labels: dict[str, str] | None = None, memory: str | None = None,
                log_limit: int = 1_000_000) -> tuple[bool, str]:
    """Build `dockerfile` with `files` (bytes, or a directory to copy) as context; (ok, build log).

    `memory` limits each build step's container; the log keeps about `log_limit` bytes (head and tail).
    """
    from docker.utils import parse_bytes

    with tempfile.TemporaryFile() as ctx:
        with tarfile.open(fileobj=ctx, mode="w") as tar:
            _add_bytes(tar, "Dockerfile", dockerfile.encode())
            for name, content in files.items():
                if isinstance(content, Path):
                    tar.add(str(content), arcname=name)
                else:
                    _add_bytes(tar, name, content)
        ctx.seek(0)
        log = CappedOutput(log_limit)
        ok = True
        limits = {"memory": parse_bytes(memory), "memswap": parse_bytes(memory)} if memory else None
        stream = client.api.build(fileobj=ctx, custom_context=True, tag=tag, rm=True, forcerm=True,
                                  network_mode=network, buildargs=buildargs or {}, decode=True, pull=False,
                                  labels={IMAGE_LABEL: "layer", **(labels or {})}, container_limits=limits)
        for chunk in stream:
            if "stream" in chunk:
                log.feed(str(chunk["stream"]).encode())
            if "error" in chunk:
                ok = False
                log.feed((str(chunk["error"]) + "\n").encode())
        return ok, log.text()


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SandboxError(f"{argv[0]} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")


def image_size(client: Any, tag: str) -> int | None:
    try:
        return int(client.images.get(tag).attrs.get("Size", 0))
    except Exception:
        return None
