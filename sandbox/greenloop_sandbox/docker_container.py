"""A sandbox container's life and files: started and removed safely (a container that vanished, a caller
cancelled), and one file put in or read out."""

from __future__ import annotations

import asyncio
import io
import logging
import tarfile
import time
from typing import Any

from greenloop_sandbox.docker_exec import tar_entry

log = logging.getLogger(__name__)

WORKSPACE = "/workspace"
START_ATTEMPTS = 3  # a container that vanishes between its create and start (see run_container)


def run_container(client: Any, image: str, kwargs: dict[str, Any]) -> Any:
    """`containers.run`, once more when the container vanished between create and start.

    Kept for a `docker container prune` from another tool (a created container counts as stopped). The
    404s that led to it (2026-11-26) were most likely the reaper's list racing another run's close
    (mended in reaper.list_containers, 2026-11-27): the same message, on another container's id.
    """
    import docker.errors

    for attempt in range(1, START_ATTEMPTS):
        try:
            return client.containers.run(image, **kwargs)
        except docker.errors.NotFound:
            log.warning("sandbox container %s vanished while starting (try %d); starting it again",
                        kwargs["name"], attempt)
            remove_named(client, kwargs["name"])
            time.sleep(0.2 * attempt)
    return client.containers.run(image, **kwargs)


def remove_container(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception as exc:  # already gone
        log.debug("remove %s: %s", getattr(container, "name", "?"), exc)


def remove_named(client: Any, name: str) -> None:
    """Remove a container that was created but whose start failed or was cancelled."""
    try:
        client.containers.get(name).remove(force=True)
    except Exception as exc:  # never created
        log.debug("remove %s: %s", name, exc)


def ulimit(name: str, value: int) -> Any:
    import docker.types

    return docker.types.Ulimit(name=name, soft=value, hard=value)


async def quietly(fut: asyncio.Future[Any]) -> Any:
    try:
        return await fut
    except Exception:
        return None


def put_file(container: Any, folder: str, name: str, data: bytes) -> str:
    """`data` written as `folder/name` in the container (mode 0644, owned by root); its path there."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tar_entry(name, tarfile.REGTYPE, 0o644)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    container.put_archive(folder, buf.getvalue())
    return f"{folder}/{name}"


def read_file(container: Any, path: str) -> str | None:
    """The text of the file at `path` in the container, or None when there is none."""
    import docker.errors

    try:
        stream, _ = container.get_archive(path)
    except docker.errors.NotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.next()
        fh = tar.extractfile(member) if member else None
        return fh.read().decode("utf-8", errors="replace") if fh else None
