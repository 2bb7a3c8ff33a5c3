"""`greenloop bench --cluster` on a real two-node Ray cluster on this machine, sandboxes in real Docker.

8 cells (2 HumanEvalFix tasks x 2 configs x 2 repeats) with an oracle model: on the cluster they run
on both nodes and the report equals the same bench run here without Ray. A node killed mid-bench takes
its cells with it; Ray runs them again on the other node, and the run store keeps each cell once.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from tests.bench.test_bench_run import CONFIGS, _oracle
from tests.support.ray_nodes import RayCluster, two_nodes

from greenloop.bench import BenchOptions, CellResult, load_configs, run_bench, write_reports
from greenloop.bench.runner import state_dir
from greenloop.bench.suites import load_suite, repo_root
from greenloop.cli import main
from greenloop.errors import GreenloopError
from greenloop.run_records import RunStore
from greenloop.settings import Settings
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.reaper import list_containers

pytestmark = [pytest.mark.cluster, pytest.mark.docker, pytest.mark.timeout(240)]
SAME = ("key", "config", "task", "repeat", "seed", "model", "outcome", "iterations", "prompt_tokens",
        "completion_tokens", "cost", "error", "extra")  # all but the wall time, run id and node


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    root = repo_root()
    with two_nodes(f"{root / 'server'}:{root / 'sandbox'}") as started:
        yield started


@pytest.fixture
def base(scripted_llm: Any) -> Settings:
    suite = load_suite("humanevalfix", limit=2)
    scripted_llm.script("the comparison is wrong", step="diagnosis")
    oracle = _oracle(suite.tasks[0].extra)

    def slowly(request: dict[str, Any]) -> str:
        time.sleep(0.5)  # cells overlap, so a node killed mid-bench has cells running
        return str(oracle(request))

    scripted_llm.script(slowly, step="debug_plan")
    return Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False},
        sandbox={"backend": "docker"},
        loop={"max_iterations": 1, "strategy": "plan"},
    )


def _options(out: Path, **kw: Any) -> BenchOptions:
    return BenchOptions(suite="humanevalfix", out_dir=out, configs=load_configs(CONFIGS), repeat=2, limit=2, **kw)


def _node_names(results: list[CellResult], cluster: RayCluster) -> set[str]:
    import ray

    ray.init(address=cluster.address, logging_level="ERROR")
    try:
        by_id = {n["NodeID"][:12]: next(r for r in n["Resources"] if r.startswith("gl_")) for n in ray.nodes()}
    finally:
        ray.shutdown()
    return {by_id[r.node] for r in results}


def _left_behind(pids: set[int]) -> list[str]:
    """Sandbox containers still there whose owner was a process of the cluster."""
    return [c.name for c in list_containers(docker_client()) if int(c.labels.get("greenloop.owner_pid", 0)) in pids]


async def test_cells_run_on_both_nodes_and_report_as_without_the_cluster(
    tmp_path: Path, base: Settings, cluster: RayCluster
) -> None:
    here = await run_bench(_options(tmp_path / "here", jobs=4), base)
    lines: list[str] = []
    there = await run_bench(_options(tmp_path / "there", jobs=0, cluster=cluster.address), base,
                            status=lines.append)

    assert there.ran_now == len(there.results) == 8
    assert _node_names(there.results, cluster) == {"gl_head", "gl_second"}
    assert [{k: getattr(r, k) for k in SAME} for r in there.results] == [
        {k: getattr(r, k) for k in SAME} for r in here.results]
    summaries = [[_no_times(asdict(s)) for s in write_reports(run).summaries] for run in (here, there)]
    assert summaries[0] == summaries[1]
    assert any("running" in line and "per node" in line for line in lines)
    with RunStore.open(state_dir(tmp_path / "there") / "runs.sqlite3") as store:
        runs = store.list_runs(limit=100)
    assert len(runs) == 8 and all(r.outcome for r in runs)  # every cell's run merged whole
    assert not _left_behind(cluster.pids())


async def test_a_wrong_cluster_address_is_named(
    tmp_path: Path, base: Settings, scripted_llm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(GreenloopError, match=r"127\.0\.0\.1:9 .*ray start --head"):
        await run_bench(_options(tmp_path, jobs=0, cluster="127.0.0.1:9"), base)
    with pytest.raises(GreenloopError, match="'nowhere' is not auto or HOST:PORT"):
        await run_bench(_options(tmp_path, jobs=0, cluster="nowhere"), base)
    args = ["bench", "--suite", "humanevalfix", "--limit", "1", "--out", str(tmp_path / "cli"),
            "--base-url", scripted_llm.base_url, "--cluster", "127.0.0.1:9"]
    assert await asyncio.to_thread(main, args) == 2
    assert "No Ray cluster answers at 127.0.0.1:9" in capsys.readouterr().err


def _bench_cli(out: Path, llm_url: str, address: str) -> subprocess.Popen[str]:
    root = repo_root()
    env = {**os.environ, "PYTHONPATH": f"{root / 'server'}:{root / 'sandbox'}", "GREENLOOP_LLM__API_KEY": "k",
           "GREENLOOP_LLM__MAX_RETRIES": "0", "GREENLOOP_LOCAL_MODEL__ENABLED": "false",
           "GREENLOOP_LOOP__STRATEGY": "plan", "GREENLOOP_SANDBOX__BACKEND": "docker"}
    args = [sys.executable, "-m", "greenloop", "bench", "--suite", "humanevalfix", "--limit", "2", "--repeat", "2",
            "--out", str(out), "--base-url", llm_url, "--model", "scripted", "--max-iterations", "1",
            "--cluster", address, *[a for c in CONFIGS for a in ("--config", str(c))]]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def test_a_killed_driver_resumes_with_nothing_run_twice(
    tmp_path: Path, base: Settings, scripted_llm: Any, cluster: RayCluster
) -> None:
    out = tmp_path / "bench"
    driver = _bench_cli(out, scripted_llm.base_url, cluster.address)
    assert driver.stdout is not None
    finished = 0
    pids = cluster.pids()
    for line in driver.stdout:
        finished += line.startswith("[")
        if finished == 3:
            pids.update(cluster.pids())  # the workers running the cells in flight
            driver.send_signal(signal.SIGKILL)  # no clean-up of any kind
            break
    driver.wait(timeout=30)
    before = [json.loads(x)["key"] for x in (state_dir(out) / "results.jsonl").read_text().splitlines()]
    assert 3 <= len(before) < 8

    again = _bench_cli(out, scripted_llm.base_url, cluster.address)
    text, _ = again.communicate(timeout=180)
    assert again.returncode == 0, text
    keys = [json.loads(x)["key"] for x in (state_dir(out) / "results.jsonl").read_text().splitlines()]
    assert keys[: len(before)] == before and len(keys) == len(set(keys)) == 8  # resumed; none twice
    with RunStore.open(state_dir(out) / "runs.sqlite3") as store:
        runs = store.list_runs(limit=100)
    assert len(runs) == 8 and all(r.outcome for r in runs)  # the killed driver's cells in flight left nothing
    assert not _left_behind(pids | cluster.pids())


async def test_a_node_killed_mid_bench_loses_no_cell(tmp_path: Path, base: Settings, cluster: RayCluster) -> None:
    second = cluster.nodes[1]
    pids = cluster.pids()
    killed = threading.Event()
    lines: list[str] = []
    in_flight: list[int] = []

    def progress(result: CellResult, finished: int, total: int) -> None:
        running = int(re.search(r"(\d+) running", lines[-1]).group(1))  # type: ignore[union-attr]
        if running > 2 and not killed.is_set():  # the first moment more cells run than one node has CPUs
            in_flight.append(running)
            pids.update(cluster.pids())
            second.kill()  # cells of the second node are mid-run now: their model calls are slow
            killed.set()

    out = tmp_path / "bench"
    run = await run_bench(_options(out, jobs=0, cluster=cluster.address), base, progress=progress,
                          status=lines.append)

    assert killed.is_set() and in_flight[0] > 2  # 2 CPUs a node: some of them were on the second node
    lines = (state_dir(out) / "results.jsonl").read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert len(keys) == len(set(keys)) == 8 == len(run.results)  # every cell finished, none twice
    assert sum(r.passed for r in run.results) == 4
    with RunStore.open(state_dir(out) / "runs.sqlite3") as store:
        runs = store.list_runs(limit=100)
    assert len(runs) == 8 and all(r.outcome for r in runs)  # no record of the lost attempts, no half run
    assert not (state_dir(out) / "pending").exists() or not any((state_dir(out) / "pending").iterdir())
    assert not _left_behind(pids | cluster.pids())


def _no_times(summary: dict[str, Any]) -> dict[str, Any]:
    """A config's summary without what differs between any two runs: wall times."""
    return {k: v for k, v in summary.items() if "seconds" not in k and k != "fixes_per_minute"}
