"""The warm pytest worker in a Docker sandbox's container: put its program in, start it, wait until it serves.

The worker is its own exec, detached, as the sandbox user; it is no command's child, and every later
command carries its process group in GREENLOOP_SPARE so the cleanup after that command spares it
(docker_exec.py). Its program, and the channel's agent (docker_channel.py), go in read-only (owned by
root), so a test run cannot change them.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from greenloop_sandbox.docker_exec import USER, tar_entry
from greenloop_sandbox.values import SandboxError
from greenloop_sandbox.warm import WORKER_FILE

AGENT_FILE = WORKER_FILE.with_name("channel_agent.py")
CHILD_FILE = WORKER_FILE.with_name("warm_child.py")  # the worker loads it from its own folder

FOLDER = "/tmp/greenloop-warm"  # the program, root's
RUN_DIR = "/tmp/greenloop-warm-run"  # the worker's socket and state, the sandbox user's (mode 0700)
SCRIPT = f"{FOLDER}/warm_worker.py"
AGENT = f"{FOLDER}/channel_agent.py"
SOCKET = f"{RUN_DIR}/sock"
START_SECONDS = 30.0


def start_worker_blocking(client: Any, container: Any, env: Mapping[str, str], support: str, workdir: str,
                          read_file: Callable[[str], str | None]) -> int:
    """Start the worker in `container`; its process group once it serves (SandboxError if it does not)."""
    container.put_archive("/tmp", _program_tar())
    state = f"{RUN_DIR}/state-{uuid.uuid4().hex[:12]}.json"  # never an earlier worker's
    argv = ["python3", "-P", SCRIPT, "serve", SOCKET, support, state]
    ex = client.api.exec_create(container.id, argv, stdout=False, stderr=False, environment=dict(env),
                                workdir=workdir, user=USER)
    client.api.exec_start(ex["Id"], detach=True)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        text = read_file(state)
        if text:
            try:
                return int(json.loads(text)["pgid"])
            except (ValueError, KeyError, TypeError) as exc:
                raise SandboxError(f"the warm worker wrote a state that is not JSON: {text[:200]!r}") from exc
        if not client.api.exec_inspect(ex["Id"]).get("Running", False):
            code = client.api.exec_inspect(ex["Id"]).get("ExitCode")
            raise SandboxError(f"the warm worker exited with code {code} before it served")
        time.sleep(0.05)
    raise SandboxError(f"the warm worker did not serve within {START_SECONDS:.0f}s")


def _program_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        folder = tar_entry(FOLDER.removeprefix("/tmp/"), tarfile.DIRTYPE, 0o755)
        folder.uid = folder.gid = 0
        folder.uname = folder.gname = "root"
        tar.addfile(folder)
        for source, path in ((WORKER_FILE, SCRIPT), (CHILD_FILE, f"{FOLDER}/warm_child.py"), (AGENT_FILE, AGENT)):
            data = source.read_bytes()
            info = tar_entry(path.removeprefix("/tmp/"), tarfile.REGTYPE, 0o644)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
