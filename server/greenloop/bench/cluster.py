"""Bench cells as Ray tasks: each runs on the node Ray picks and sends back its result and run records.

A cell opens its sandbox on the node it runs on (that node's Docker engine, or `sandbox.engines`),
talks to the model endpoint named in the settings, and records into a store of its own; the driver
keeps what comes back (`handoff.py`). Ray retries a cell whose node dies (`max_retries`): nothing was
kept of the lost attempt, so the retry is the only record. Ray is the optional `cluster` extra.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import tempfile
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from greenloop.bench.state import CellResult
from greenloop.errors import GreenloopError
from greenloop.run_records.bundle import Bundle, read_bundle
from greenloop.settings import Settings

log = logging.getLogger(__name__)

RAY_MISSING = "--cluster needs Ray: install greenloop's cluster extra (pip install 'greenloop[cluster]')."
NO_CLUSTER = ("No Ray cluster answers at {address} ({error}). Start one with `ray start --head`, or pass "
              "the head's address as --cluster HOST:PORT.")
CELL_RETRIES = 3  # a node that dies takes its cells with it; Ray runs them again elsewhere
# How a cell is run (the bench runner's `run_cell`), handed in: Ray sends it to the node with the cell.
RunCell = Callable[[Any], Coroutine[Any, Any, CellResult]]


@dataclass(frozen=True)
class CellOutput:
    """What a cell sends back to the driver."""

    result: CellResult
    bundle: Bundle
    node: str


@dataclass
class ClusterStatus:
    """What the cluster is doing now: cells done per node and cells in flight."""

    done: Counter[str] = field(default_factory=Counter)
    running: int = 0
    lost: int = 0

    def line(self) -> str:
        nodes = ", ".join(f"{node} {n}" for node, n in sorted(self.done.items()))
        lost = f", {self.lost} lost" if self.lost else ""
        return f"{sum(self.done.values())} done, {self.running} running{lost}" + (f"; per node: {nodes}" if nodes else "")


def check_address(address: str) -> None:
    """GreenloopError naming `address` unless it is `auto` or a HOST:PORT that accepts a connection."""
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise GreenloopError(f"--cluster {address!r} is not auto or HOST:PORT (the Ray head's GCS address).")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise GreenloopError(NO_CLUSTER.format(address=address, error=exc)) from exc


@contextmanager
def connected(address: str) -> Iterator[Any]:
    """This process as the driver of the Ray cluster at `address`; disconnected when the block ends."""
    try:
        import ray
    except ImportError as exc:
        raise GreenloopError(RAY_MISSING) from exc
    check_address(address)
    env = {"RAY_USAGE_STATS_ENABLED": "0"}
    if os.environ.get("PYTHONPATH"):  # a checkout run from source: the workers import the same code
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    try:
        ray.init(address=address, runtime_env={"env_vars": env}, logging_level=logging.ERROR,
                 log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise GreenloopError(NO_CLUSTER.format(address=address, error=str(exc).splitlines()[0][:200])) from exc
    try:
        yield ray
    finally:
        ray.shutdown()


class ClusterCells:
    """Runs cells as Ray tasks spread over the nodes (each with `run_cell`), and keeps `status` current for the
    progress line."""

    def __init__(self, ray: Any, run_cell: RunCell, on_status: Callable[[ClusterStatus], None] | None = None) -> None:
        self._ray = ray
        self._run_cell = run_cell
        self.status = ClusterStatus()
        self._on_status = on_status
        self._remote = ray.remote(cell_on_node).options(
            num_cpus=1, max_retries=CELL_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD")

    async def run(self, cell: Any) -> CellOutput | None:
        """The cell's output; None when Ray lost it past its retries (kept as not run: a rerun does it)."""
        ref = self._remote.remote(cell, self._run_cell)
        self._moved(running=+1)
        try:
            output: CellOutput = await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref)
            raise
        except Exception as exc:  # nodes gone past the retries: the cell did not run, it did not fail
            log.warning("bench cell %s was lost on the cluster: %s", cell.key, str(exc).splitlines()[0][:200])
            self.status.lost += 1
            return None
        finally:
            self._moved(running=-1)
        self.status.done[output.node] += 1
        self._moved()
        return output

    def reap_everywhere(self, settings: Settings) -> int:
        """Remove leftover sandboxes (of cells lost with their worker) on every node still alive."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        reap = self._ray.remote(reap_on_node)
        refs = [reap.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                .remote(settings) for n in self._ray.nodes() if n.get("Alive")]
        try:
            return sum(self._ray.get(refs, timeout=120))
        except Exception as exc:  # a node that went away meanwhile: its leftovers go when greenloop next runs there
            log.warning("reaping leftover sandboxes on the cluster failed: %s", str(exc).splitlines()[0][:200])
            return 0

    def _moved(self, running: int = 0) -> None:
        self.status.running += running
        if self._on_status is not None:
            self._on_status(self.status)


def cell_on_node(cell: Any, run_cell: RunCell) -> CellOutput:
    """The Ray task: run the cell here with `run_cell` and a run store of its own, and return it with its records."""
    import ray

    node = ray.get_runtime_context().get_node_id()[:12]
    with tempfile.TemporaryDirectory(prefix="greenloop-cell-") as tmp:
        store = Path(tmp) / "runs.sqlite3"
        settings = cell.settings.model_copy(
            update={"runs": cell.settings.runs.model_copy(update={"store": str(store)})})
        result = asyncio.run(run_cell(replace(cell, settings=settings)))
        bundle = read_bundle(store) if store.exists() else {}
    result.node = node
    return CellOutput(result, bundle, node)


def reap_on_node(settings: Settings) -> int:
    from greenloop.agent.ports import reap_leftovers

    return reap_leftovers(settings)
