"""Benchmark: bench cells on 1 vs 2 Ray nodes, and a round's candidates on 1 vs 2 Docker engines, on this machine.

    PYTHONPATH=server:sandbox python benchmarks/bench_cluster.py [--cells 20] [--sleep 2]

Part A: the same bench (`--cells` cells of a one-line fix, scripted model, real Docker sandboxes, a test
suite that sleeps `--sleep` s) here with `--jobs 2`, then on a Ray cluster of 1 node (2 CPUs) and 2 nodes
(2 x 2 CPUs), every node a `ray start` on 127.0.0.1. Part B: one fix run whose round tests 4 candidates
(the 4th right) with `sandbox.workers` 1 on one engine vs 2 on two engines (a second dockerd). The per-cell
overhead is measured on its own: a Ray task's round trip with a real cell as argument and a real cell's
output as result, the driver's keeping of it (pending file, store merge, state line), and for engines the
image copy (`docker save | load`) and the snapshot sync into a fresh sandbox.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.ray_nodes import two_nodes  # noqa: E402
from tests.support.scripted_llm import ScriptedLLM  # noqa: E402
from tests.support.second_docker import second_engine  # noqa: E402

from greenloop.agent import FixRequest, fix  # noqa: E402
from greenloop.bench import (  # noqa: E402
    BenchOptions,
    handoff,
    load_configs,
    run_bench,
)
from greenloop.bench.state import BenchState  # noqa: E402
from greenloop.settings import Settings  # noqa: E402
from greenloop_sandbox import DockerSandbox, load_template  # noqa: E402
from greenloop_sandbox.engine import docker_client  # noqa: E402

PYTHONPATH = f"{ROOT / 'server'}:{ROOT / 'sandbox'}"


def suite_file(folder: Path, tasks: int, sleep: float) -> Path:
    """HumanEvalFix-shaped rows: `add_k` subtracts; its test sleeps `sleep` s, then checks it adds."""
    rows = []
    for k in range(tasks):
        name = f"add_{k}"
        rows.append({"task_id": f"Sleepy/{k}", "entry_point": name, "declaration": f"def {name}(a, b):\n",
                     "buggy_solution": "    return a - b\n", "canonical_solution": "    return a + b\n",
                     "test": f"import time\n\ndef check(f):\n    time.sleep({sleep})\n    assert f(2, 3) == 5\n"})
    path = folder / "sleepy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def oracle(request: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content") or "") for m in request["messages"])
    found = re.search(r"def (add_\d+)\(", prompt)
    if not found:
        return json.dumps({"diagnosis": "?", "actions": []})
    edit = {"kind": "edit", "path": f"{found.group(1)}.py", "search": "    return a - b", "replace": "    return a + b"}
    return json.dumps({"diagnosis": "it subtracts", "actions": [edit]})


def base_settings(llm: ScriptedLLM, **sandbox: Any) -> Settings:
    return Settings(llm={"base_url": llm.base_url, "api_key": "k", "model": "scripted", "max_retries": 0},
                    local_model={"enabled": False}, sandbox={"backend": "docker", **sandbox},
                    loop={"max_iterations": 1, "strategy": "plan", "diagnosis": False})


async def bench_wall(suite: Path, out: Path, base: Settings, cells: int, **options: Any) -> float:
    config = ROOT / "benchmarks" / "configs" / "plain.toml"
    start = time.perf_counter()
    run = await run_bench(BenchOptions(suite="humanevalfix", suite_file=suite, out_dir=out, repeat=2,
                                       limit=cells // 2, configs=load_configs([config]), **options), base)
    wall = time.perf_counter() - start
    assert len(run.results) == cells and all(r.passed for r in run.results), [r.error for r in run.results]
    return wall


def ray_overhead(address: str, cell: Any, output: Any, tries: int = 20) -> float:
    """Median seconds of a Ray task's round trip that takes a real cell and returns a real cell's output."""
    import ray

    ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": PYTHONPATH}})
    try:
        def echo_output(_: Any) -> Any:
            return output

        echo = ray.remote(echo_output).options(num_cpus=1, scheduling_strategy="SPREAD")
        ray.get(echo.remote(cell))  # a worker started
        times = []
        for _ in range(tries):
            start = time.perf_counter()
            ray.get(echo.remote(cell))
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        ray.shutdown()


def keep_overhead(out: Path, output: Any, tries: int = 20) -> float:
    folder = Path(tempfile.mkdtemp(dir=out))
    state = BenchState(folder)
    times = []
    for k in range(tries):
        result = output.result
        start = time.perf_counter()
        handoff.keep(state, folder / "runs.sqlite3", type(result)(**{**result.__dict__, "key": f"k{k}"}),
                     {"runs": [{**r, "id": f"{r['id']}-{k}"} for r in output.bundle.get("runs", [])],
                      **{t: [{**r, "run_id": f"{r['run_id']}-{k}"} for r in output.bundle.get(t, [])]
                         for t in ("events", "calls", "execs")}})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def part_a(llm: ScriptedLLM, work: Path, cells: int, sleep: float) -> dict[str, float]:
    suite = suite_file(work, cells // 2, sleep)
    base = base_settings(llm)
    rows = {"here, --jobs 2": await bench_wall(suite, work / "here", base, cells, jobs=2)}
    from greenloop.bench.cluster import cell_on_node  # the real task body, for one measured cell
    from greenloop.bench.runner import plan_cells, run_cell
    from greenloop.bench.suites import load_suite

    options = BenchOptions(suite="humanevalfix", suite_file=suite, out_dir=work / "one", repeat=1, limit=1,
                           configs=load_configs([ROOT / "benchmarks" / "configs" / "plain.toml"]))
    for count in (1, 2):
        with two_nodes(PYTHONPATH, count=count) as cluster:
            rows[f"Ray, {count} node(s) x 2 CPUs"] = await bench_wall(
                suite, work / f"nodes{count}", base, cells, jobs=0, cluster=cluster.address)
            if count == 2:
                cell = plan_cells(load_suite("humanevalfix", suite, limit=1), options, base)[0]
                import ray

                ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
                output = ray.get(ray.remote(cell_on_node).options(num_cpus=1).remote(cell, run_cell))
                ray.shutdown()
                rows["Ray round trip per cell (cell in, output out), s"] = ray_overhead(cluster.address, cell, output)
                rows["driver keeps a cell (pending file, merge, state), s"] = keep_overhead(work, output)
                rows["cell output size, KiB"] = len(json.dumps(output.bundle)) / 1024
    return rows


async def fix_wall(project: Path, llm: ScriptedLLM, store: Path, **sandbox: Any) -> float:
    settings = Settings(llm={"base_url": llm.base_url, "api_key": "k", "model": "scripted", "max_retries": 0},
                        local_model={"enabled": False}, runs={"store": str(store)},
                        sandbox={"backend": "docker", **sandbox},
                        loop={"strategy": "candidates", "candidates": 4, "max_iterations": 1})
    llm.reset()
    wrong = ["a * b", "a ** b", "b - a"]
    llm.script(*[f"```python\ndef add(a, b):\n    return {w}\n```\n" for w in wrong],
               "```python\ndef add(a, b):\n    return a + b\n```\n", step="repair_function", repeat=False)
    start = time.perf_counter()
    done = None
    async for event in fix(FixRequest(project), settings):
        done = event
    assert done is not None and done.kind == "done" and done.outcome == "green", done
    return time.perf_counter() - start


async def part_b(llm: ScriptedLLM, work: Path, sleep: float) -> dict[str, float]:
    project = work / "calc"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "test_calc.py").write_text(f"import time\nfrom calc import add\n\n\ndef test_add():\n"
                                          f"    time.sleep({sleep})\n    assert add(2, 3) == 5\n")
    rows: dict[str, float] = {}
    with second_engine() as url:
        default = docker_client()
        template = load_template("python")
        start = time.perf_counter()
        async with DockerSandbox(template, engine=url) as sb:  # the image arrives by save | load
            rows["image copy to a fresh engine (save | load), s"] = time.perf_counter() - start
            files = {p.name: p.read_bytes() for p in project.iterdir()}
            start = time.perf_counter()
            await sb.sync(files)
            rows["snapshot sync into a fresh sandbox, s"] = time.perf_counter() - start
        assert default is not None
        one = [await fix_wall(project, llm, work / "r1.sqlite3", workers=1) for _ in range(2)]
        two = [await fix_wall(project, llm, work / "r2.sqlite3", workers=2,
                              engines=["unix:///var/run/docker.sock", url]) for _ in range(2)]
    rows["round of 4 candidates, 1 engine x 1 sandbox, s"] = statistics.median(one)
    rows["round of 4 candidates, 2 engines x 1 sandbox, s"] = statistics.median(two)
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--only", choices=("a", "b"))
    args = parser.parse_args()
    llm = ScriptedLLM().start()
    llm.script(oracle, step="debug_plan")
    try:
        with tempfile.TemporaryDirectory(prefix="glbench-") as tmp:
            rows: dict[str, float] = {}
            if args.only != "b":
                rows.update(await part_a(llm, Path(tmp), args.cells, args.sleep))
            if args.only != "a":
                rows.update(await part_b(llm, Path(tmp), args.sleep))
    finally:
        llm.stop()
    print("| measurement | value |\n|---|---:|")
    for name, value in rows.items():
        print(f"| {name} | {value:.3f} |")


if __name__ == "__main__":
    asyncio.run(main())
