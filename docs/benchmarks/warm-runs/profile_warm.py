"""Where a warm candidate run's seconds go, step by step, on a realbugs case in a Docker sandbox.

    PYTHONPATH=server:sandbox:benchmarks nice -n 19 python docs/benchmarks/warm-runs/profile_warm.py [--case black-7] [--n 10] [--cpus 0.5]

A measuring copy of the worker, its child and the channel's agent (time stamps added, nothing else) is put
in the sandbox in place of the real ones; each candidate (a small edit of the bug's function, as
bench_warm.py makes them) is synced and its failing tests run warm, and the median of each step is
printed as a table. Then, for reference, the same sandbox runs candidates cold over the same channel
(warm runs turned off, the channel left open): what the fork saves apart from the channel.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_warm
import realbugs
from greenloop.agent.repair.splice import Target
from greenloop.bench.realbugs import unpack
from greenloop.retrieval import parse_frames
from greenloop_sandbox import Limits, open_sandbox, read_tree
from greenloop_sandbox import docker_channel as dch
from greenloop_sandbox import docker_warm as dw

STAMPS: list[dict[str, float]] = []  # the host's and the agent's time stamps of each channel run
STEPS = [("host -> agent", "send", "agent_recv"), ("shell, timeout, client start", "agent_recv", "client"),
         ("client -> forked child", "client", "child"), ("child: stdio, cwd, environment", "child", "main"),
         ("pytest start, plugins, configure", "main", "configure"), ("configure -> collection", "configure", "collect_start"),
         ("collection (test module, project code)", "collect_start", "collect_end"), ("the tests", "tests_start", "tests_end"),
         ("report written, session end", "tests_end", "main_end"), ("bytecode cache", "main_end", "cached"),
         ("child exit, cleanup, agent", "cached", "exited"), ("report read", "exited", "read"), ("agent -> host", "read", "answer")]


def measuring_copies(folder: Path) -> None:
    """The worker, child and agent with time stamps; dw's files point at them."""
    src = Path(dw.__file__).parent
    worker = (src / "warm_worker.py").read_text()
    worker = worker.replace("import contextlib\n", "import time as _t\nT0 = _t.time()\nimport contextlib\n", 1)
    worker = worker.replace('"env": dict(os.environ)}', '"env": dict(os.environ), "t_client": T0}', 1)
    child = (src / "warm_child.py").read_text()
    child = child.replace("    code = 1\n    try:\n", "    code = 1\n    import time as _t\n"
                          "    T = {'client': request.get('t_client'), 'child': _t.time()}\n    try:\n", 1)
    child = child.replace('        code = int(worker.runner.pytest.main(request["argv"], plugins=worker.runner.plugins()))\n', '''\
        class Stamps:
            def pytest_configure(self, config): T.setdefault('configure', _t.time())
            def pytest_collection(self, session): T['collect_start'] = _t.time()
            def pytest_collection_finish(self, session): T['collect_end'] = _t.time()
            def pytest_runtestloop(self, session): T['tests_start'] = _t.time()
            def pytest_sessionfinish(self, session): T['tests_end'] = _t.time()
        T['main'] = _t.time()
        code = int(worker.runner.pytest.main(request["argv"], plugins=[Stamps(), *worker.runner.plugins()]))
        T['main_end'] = _t.time()
''', 1)
    child = child.replace("        _cache_bytecode(os.getcwd())\n", "        _cache_bytecode(os.getcwd())\n        T['cached'] = _t.time()\n"
                          "        json.dump(T, open(os.path.join(worker.private, 'stamps.json'), 'w'))\n", 1)
    agent = (src / "channel_agent.py").read_text()
    agent = agent.replace("    proc = subprocess.Popen(", "    import time as _t\n    T = {'agent_recv': _t.time()}\n"
                          "    proc = subprocess.Popen(", 1)
    agent = agent.replace('    done: dict[str, Any] = {"code": code}\n', "    T['exited'] = _t.time()\n"
                          '    done: dict[str, Any] = {"code": code, "t": T}\n', 1)
    agent = agent.replace('        done["read"] = read(request["read"])\n', '        done["read"] = read(request["read"])\n'
                          "    T['read'] = _t.time()\n", 1)
    for name, text in (("warm_worker.py", worker), ("warm_child.py", child), ("channel_agent.py", agent)):
        assert "_t.time()" in text, name
        (folder / name).write_text(text)
    dw.WORKER_FILE, dw.CHILD_FILE, dw.AGENT_FILE = (folder / "warm_worker.py", folder / "warm_child.py",
                                                    folder / "channel_agent.py")
    real_request = dch.Channel._request

    def stamped(self: dch.Channel, request: dict[str, Any], *args: Any) -> dict[str, Any]:
        sent = time.time()
        done = real_request(self, request, *args)
        if request["op"] == "run":
            STAMPS.append({"send": sent, "answer": time.time(), **done.get("t", {})})
        return done

    dch.Channel._request = stamped  # type: ignore[method-assign,assignment]


async def main(case_id: str, n: int, cpus: float) -> None:
    case = realbugs.load_cases(ids={case_id})[0]
    row = next(json.loads(line) for line in (realbugs.DATA / "cases.jsonl").read_text().splitlines()
               if json.loads(line)["id"] == case_id)
    truth = case.truth[0]
    limits = Limits(test_case_timeout=20, case_timeout_factor=0, test_timeout=300, cpus=cpus)
    with tempfile.TemporaryDirectory() as tmp:
        measuring_copies(Path(tmp))
        base = dict(read_tree(unpack(case.folder / "workspace.tar.gz", Path(tmp), case.id)))
        source = base[truth.path].decode()
        target = Target(truth.path, truth.symbol, "function", truth.start, truth.end)
        hot = {f.line for f in parse_frames(case.output, [truth.path])
               if f.path == truth.path and truth.start <= f.line <= truth.end}
        edited = list(bench_warm.candidates(source, target, n, hot))
        async with open_sandbox("python", backend="docker", limits=limits, warm_runs=True) as box:
            if row["requirements"]:
                assert (await box.install(list(row["requirements"]))).ok
            await box.sync(base)
            for _ in range(2):  # the worker starts, learns, imports
                await box.run_tests(list(case.tests))
            rows = []
            for _kind, text in edited:
                start = time.time()
                await box.sync({**base, truth.path: text.encode()})
                synced = time.time()
                await box.run_tests(list(case.tests))
                end = time.time()
                child = json.loads((await box.exec("cat /tmp/greenloop-warm-run/stamps.json")).stdout)
                t = {**STAMPS[-1], **child}
                rows.append({"sync": synced - start, **{name: t[b] - t[a] for name, a, b in STEPS},
                             "report parsed": end - t["answer"], "the test run, as its caller waits": end - synced})
            box.warm.enabled = False  # type: ignore[attr-defined]  # cold from now on; the channel stays open
            cold = []
            for _kind, text in edited:
                await box.sync({**base, truth.path: text.encode()})
                start = time.time()
                await box.run_tests(list(case.tests))
                cold.append(time.time() - start)
    print(f"{case_id}, {len(rows)} candidates, {cpus:g} cores per sandbox; median seconds per step")
    print("| step | s (median) |\n|---|---|")
    for key in rows[0]:
        print(f"| {key} | {statistics.median(r[key] for r in rows):.3f} |")
    print(f"| for reference: a cold run over the same channel | {statistics.median(cold):.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="black-7")
    parser.add_argument("--n", type=int, default=10, help="candidates")
    parser.add_argument("--cpus", type=float, default=0.5)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.case, args.n, args.cpus)))
