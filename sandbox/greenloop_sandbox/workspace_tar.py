"""The workspace's files as a Docker sandbox hands them over: a tar owned by the sandbox user, or a folder."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from greenloop_sandbox.docker_exec import tar_entry
from greenloop_sandbox.tree import check_relpath, is_executable_text


def file_mode(data: bytes) -> int:
    """A file's mode in the sandbox: executable when it starts with `#!`, as in the workspace it came from."""
    return 0o755 if is_executable_text(data) else 0o644


def tar_files(files: Mapping[str, bytes]) -> bytes:
    """A tar of `files` owned by the sandbox user, parent folders included."""
    buf = io.BytesIO()
    dirs: set[str] = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in sorted(files.items()):
            for parent in reversed(PurePosixPath(rel).parents[:-1]):
                if str(parent) not in dirs:
                    dirs.add(str(parent))
                    tar.addfile(tar_entry(str(parent), tarfile.DIRTYPE, 0o755))
            info = tar_entry(rel, tarfile.REGTYPE, file_mode(data))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def write_tree(root: Path, files: Mapping[str, bytes]) -> None:
    """`files` written under `root` (a build context's copy of the workspace)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root / check_relpath(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
