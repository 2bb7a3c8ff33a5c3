"""Seconds to the first model call, and to green, on a bug that makes the code loop forever.

    python benchmarks/bench_hang.py                  # before (every test waits for the 15 s cap) and after
    python benchmarks/bench_hang.py --repeats 3 --backend local

The workspace is tests/fixtures/projects/python-loops: bitcount with `n ^= n - 1` (it should be
`&=`), 9 tests, every one of which loops. No small edit fixes it (there is no `^=` -> `&=` edit),
so the loop's small edits run first and then the model is asked. The model is the scripted
OpenAI-compatible server on 127.0.0.1 (tests/support/scripted_llm.py) answering every request with
the right function, so the figures are the loop's own time, not a model's. "before":
`sandbox.case_timeout_factor = 0` (every test gets `sandbox.test_case_timeout`, no stop on a
repeated hang: the behaviour before the adaptive per-test timeout); "after": the defaults.
Target (issue 41): at most 30 s to the first model call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.scripted_llm import ScriptedLLM  # noqa: E402

from greenloop.agent import FixRequest, fix  # noqa: E402
from greenloop.agent.events import Done  # noqa: E402
from greenloop.settings import Settings  # noqa: E402

PROJECT = ROOT / "tests" / "fixtures" / "projects" / "python-loops"
RIGHT = ("`n ^= n - 1` never clears the lowest bit when it should.\n```python\ndef bitcount(n):\n"
         "    count = 0\n    while n:\n        n &= n - 1\n        count += 1\n    return count\n```\n")
TARGET = 30.0


async def one_run(llm: ScriptedLLM, factor: float, backend: str, budget: float) -> dict[str, Any]:
    asked: list[float] = []

    def answer(_: dict[str, Any]) -> str:
        asked.append(time.monotonic())
        return RIGHT

    llm.script(answer)
    with tempfile.TemporaryDirectory(prefix="bench-hang-") as tmp:
        settings = Settings(
            llm={"base_url": llm.base_url, "api_key": "k", "model": "scripted", "timeout": 30},
            local_model={"enabled": False}, runs={"store": str(Path(tmp) / "runs.sqlite3")},
            sandbox={"backend": backend, "case_timeout_factor": factor}, loop={"max_seconds": budget},
        )
        start = time.monotonic()
        outcome, events = "none", 0
        async for event in fix(FixRequest(workspace=PROJECT), settings):
            events += 1
            if isinstance(event, Done):
                outcome = event.outcome
        end = time.monotonic()
    llm.rules.clear()
    return {"first_call": (asked[0] - start) if asked else None, "total": end - start, "outcome": outcome}


async def main_async(repeats: int, backend: str, budget: float, names: list[str]) -> int:
    llm = ScriptedLLM().start()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    try:
        for _ in range(repeats):
            for name, factor in (("before", 0.0), ("after", 20.0)):
                if name not in rows:
                    continue
                row = await one_run(llm, factor, backend, budget)
                rows[name].append(row)
                print(f"{name}: {row}", flush=True)
    finally:
        llm.stop()
    print("\n| run | first model call s (median) | to green s (median) | outcomes |")
    print("|---|---:|---:|---|")
    med: dict[str, float] = {}
    for name, runs in rows.items():
        firsts = [r["first_call"] for r in runs if r["first_call"] is not None]
        med[name] = statistics.median(firsts) if firsts else float("nan")
        totals = statistics.median(r["total"] for r in runs)
        print(f"| {name} | {med[name]:.1f} | {totals:.1f} | {', '.join(r['outcome'] for r in runs)} |")
    if "before" in med and "after" in med:
        print(f"\nratio before/after (first model call): {med['before'] / med['after']:.1f}x")
    if "after" in med:
        print(f"target <= {TARGET:.0f} s to the first model call: {'met' if med['after'] <= TARGET else 'not met'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--backend", default="docker", choices=["docker", "local"])
    parser.add_argument("--budget", type=float, default=600.0, help="loop.max_seconds of each run")
    parser.add_argument("--runs", default="before,after", help="which runs: before (a fixed 15 s per test), after")
    args = parser.parse_args()
    return asyncio.run(main_async(args.repeats, args.backend, args.budget, args.runs.split(",")))


if __name__ == "__main__":
    raise SystemExit(main())
