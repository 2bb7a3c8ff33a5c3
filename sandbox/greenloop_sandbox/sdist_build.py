"""An sdist built into a wheel inside a throwaway container: no network, no workspace, a timeout.

The container is started from the sandbox's own image (its python and pip) with the same limits as
the sandbox, gets the sdist and its build requirements (wheels fetched on the host) copied in, runs
`pip wheel --no-index` as the sandbox user, and hands back only the `.whl` files it wrote. Whatever
the package's build code does, it does in there.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import tarfile
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

from greenloop_sandbox.docker_exec import run_in_container, tar_entry
from greenloop_sandbox.reaper import owner_labels
from greenloop_sandbox.values import ExecResult, Limits

BUILD_DIR = "/tmp/greenloop-build"


async def build_wheel(client: Any, image: str, sdist: Path, build_wheels: Path, out: Path, *, limits: Limits,
                      timeout: float) -> ExecResult:  # noqa: ASYNC109 (a build's own timeout)
    """Build `sdist` with the wheels in `build_wheels` as its only index; the wheel(s) land in `out`."""
    name = f"greenloop-build-{uuid.uuid4().hex[:12]}"
    ncpu = os.cpu_count() or 1
    kwargs: dict[str, Any] = dict(
        command=["sleep", "infinity"], detach=True, init=True, user="1000:1000", network_mode="none",
        mem_limit=limits.memory, memswap_limit=limits.memory, nano_cpus=int(min(limits.cpus, ncpu) * 1e9),
        pids_limit=limits.pids, cap_drop=["ALL"], security_opt=["no-new-privileges"], name=name,
        labels=owner_labels(name, "sdist-build"), working_dir="/tmp", environment={"HOME": f"{BUILD_DIR}/home"},
    )
    container = await asyncio.to_thread(client.containers.run, image, **kwargs)
    try:
        data = await asyncio.to_thread(_context_tar, sdist, build_wheels)
        await asyncio.to_thread(container.put_archive, "/tmp", data)
        argv = ["python3", "-m", "pip", "wheel", "--no-index", "--find-links", f"{BUILD_DIR}/wheels", "--no-deps",
                "--no-cache-dir", "--use-pep517", "--disable-pip-version-check", "-w", f"{BUILD_DIR}/out",
                f"{BUILD_DIR}/sdist/{sdist.name}"]
        env = {"HOME": f"{BUILD_DIR}/home", "PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        result = await run_in_container(client, container.id, argv, timeout=timeout, env=env, workdir=BUILD_DIR,
                                        output_limit=limits.output_limit)
        if result.ok:
            stream, _ = await asyncio.to_thread(container.get_archive, f"{BUILD_DIR}/out")
            await asyncio.to_thread(_extract_wheels, b"".join(stream), out)
        return result
    finally:
        await asyncio.shield(asyncio.to_thread(_remove, container))


def _context_tar(sdist: Path, build_wheels: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in ("", "/sdist", "/wheels", "/out", "/home"):
            tar.addfile(tar_entry(f"greenloop-build{folder}", tarfile.DIRTYPE, 0o755))
        files = [(f"greenloop-build/sdist/{sdist.name}", sdist)]
        files += [(f"greenloop-build/wheels/{w.name}", w) for w in sorted(build_wheels.glob("*.whl"))]
        for arcname, path in files:
            data = path.read_bytes()
            info = tar_entry(arcname, tarfile.REGTYPE, 0o644)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()



def _extract_wheels(data: bytes, out: Path) -> None:
    """Only regular `.whl` files, by their base name: nothing the build wrote can land elsewhere."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            base = PurePosixPath(member.name).name
            if member.isfile() and base.endswith(".whl") and not base.startswith("."):
                fh = tar.extractfile(member)
                if fh is not None:
                    (out / base).write_bytes(fh.read())


def _remove(container: Any) -> None:
    with contextlib.suppress(Exception):  # already gone
        container.remove(force=True)
