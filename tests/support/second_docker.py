"""A second Docker engine on this machine for tests: its own socket, data root, exec root and containerd.

It starts empty (no images, no registry), so a sandbox on it gets its image by `docker save | load` from
the default engine. Stopped by its own PID; its folders are removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def second_engine() -> Iterator[str]:
    """The URL (unix://...) of a fresh dockerd that runs for the block."""
    root = Path(tempfile.mkdtemp(prefix="gl-d2-", dir="/tmp"))  # short: a unix socket path has ~100 bytes
    url = f"unix://{root}/docker.sock"
    log = (root / "dockerd.log").open("wb")
    process = subprocess.Popen(
        ["dockerd", "--bridge=none", "--iptables=false", "--ip6tables=false", "--shutdown-timeout", "2", "-H", url,
         "--data-root", str(root / "data"), "--exec-root", str(root / "exec"), "--pidfile", str(root / "docker.pid")],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["docker", "-H", url, "info"], capture_output=True, check=False).returncode != 0:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the second dockerd did not start: {(root / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)  # it may wait on idle API connections for longer
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # its session: dockerd and the containerd it started
            process.wait(timeout=10)
        log.close()
        shutil.rmtree(root, ignore_errors=True)
