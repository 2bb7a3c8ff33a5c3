"""A real Ray cluster of two nodes on 127.0.0.1 for tests: `ray start --head` plus `ray start --address`.

Each node is a `ray start --block` in a session of its own, so it is stopped (or killed, to test a node
that dies) by its process group: only the processes this module started, never `ray stop`. Each node has
a custom resource named after it, so a test can tell where a task ran.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

RAY = [sys.executable, "-m", "ray.scripts.scripts"]
HEALTH = {  # the head notices a dead node within a few seconds (defaults: ~30 s)
    "RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "3",
}


@dataclass
class RayNode:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def pids(self) -> set[int]:
        """Every live process of this node (its process group)."""
        out = subprocess.run(["pgrep", "-g", str(self.process.pid)], capture_output=True, text=True, check=False)
        return {int(p) for p in out.stdout.split()}

    def kill(self) -> None:
        """The node dies at once (raylet, workers and all), as a machine that loses power."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=8)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # anything of the group that outlived `ray start`


@dataclass
class RayCluster:
    address: str
    temp: Path
    nodes: list[RayNode] = field(default_factory=list)

    def pids(self) -> set[int]:
        return set().union(*(n.pids() for n in self.nodes))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(pythonpath: str, temp: Path) -> dict[str, str]:
    # no token auth: Ray 2.60's head turns it on when ~/.ray/auth_token exists (a local `ray.init()` once
    # wrote one here), and the probe and the bench's driver then cannot connect.
    # TMPDIR: a killed node's cells cannot remove their temporary folders; they go with the cluster's.
    (temp / "tmp").mkdir(exist_ok=True)
    return {**os.environ, **HEALTH, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
            "PYTHONPATH": pythonpath, "TMPDIR": str(temp / "tmp")}


def _start(name: str, args: list[str], temp: Path, pythonpath: str) -> RayNode:
    log = temp / f"{name}.log"
    with log.open("wb") as fh:
        process = subprocess.Popen(
            [*RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "2",
             "--object-store-memory", str(100 * 1024 * 1024), "--disable-usage-stats",
             "--resources", f'{{"{name}": 100}}', *args],
            stdout=fh, stderr=subprocess.STDOUT, env=_env(pythonpath, temp), start_new_session=True)
    return RayNode(name, process, log)


def _wait_for_nodes(address: str, count: int, nodes: list[RayNode], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    probe = (f"import ray; ray.init(address={address!r}, logging_level='ERROR');"
             "print(sum(1 for n in ray.nodes() if n['Alive']))")
    while time.monotonic() < deadline:
        for node in nodes:
            if node.process.poll() is not None:
                raise RuntimeError(f"ray node {node.name} exited: {node.log.read_text()[-2000:]}")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                             env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}, timeout=60)
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(1)
    raise RuntimeError(f"the Ray cluster at {address} did not reach {count} nodes in {timeout:.0f}s")


@contextlib.contextmanager
def two_nodes(pythonpath: str, count: int = 2) -> Iterator[RayCluster]:
    """A head node ("gl_head") and a second node ("gl_second"; none with count=1), stopped when the block ends."""
    temp = Path(tempfile.mkdtemp(prefix="glray-"))
    port = _free_port()
    address = f"127.0.0.1:{port}"
    cluster = RayCluster(address, temp)
    try:
        cluster.nodes.append(_start("gl_head", ["--head", "--port", str(port), "--include-dashboard", "false",
                                                "--temp-dir", str(temp / "ray")], temp, pythonpath))
        _wait_for_nodes(address, 1, cluster.nodes)
        if count > 1:
            cluster.nodes.append(_start("gl_second", ["--address", address], temp, pythonpath))
            _wait_for_nodes(address, 2, cluster.nodes)
        yield cluster
    finally:
        for node in reversed(cluster.nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)
