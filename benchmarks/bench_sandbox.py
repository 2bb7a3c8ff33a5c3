"""Benchmark: run_tests() in a warm DockerSandbox vs the same pytest on the host vs a fresh container per run.

    python benchmarks/bench_sandbox.py [--runs N] [--project DIR]

Prints medians and ratios; the target is warm <= 1.15 x host + 150 ms. The host
baseline runs the sandbox's own image-side command shape (pytest with a JUnit
report, plugin autoloading off so the host's extra pytest plugins do not skew it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from greenloop_sandbox import DockerSandbox, load_template, read_tree

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PROJECT = ROOT / "tests" / "fixtures" / "projects" / "python-fail"


def host_run(project: Path, runs: int) -> list[float]:
    times = []
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
                            "junit_family=xunit1", f"--junitxml={tmp}/r.xml"], cwd=project, env=env,
                           capture_output=True, check=False)
            times.append(time.perf_counter() - start)
    return times


async def warm_run(files: dict[str, bytes], runs: int) -> list[float]:
    times = []
    async with DockerSandbox(load_template("python")) as sb:
        await sb.sync(files)
        await sb.run_tests()  # first run warms the page cache
        for _ in range(runs):
            start = time.perf_counter()
            report = await sb.run_tests()
            times.append(time.perf_counter() - start)
            assert report.total > 0
    return times


async def fresh_run(files: dict[str, bytes], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        async with DockerSandbox(load_template("python")) as sb:
            await sb.sync(files)
            await sb.run_tests()
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--project", type=Path, default=DEFAULT_PROJECT)
    args = parser.parse_args()
    files = dict(read_tree(args.project))
    host = statistics.median(host_run(args.project, args.runs))
    warm = statistics.median(asyncio.run(warm_run(files, args.runs)))
    fresh = statistics.median(asyncio.run(fresh_run(files, max(3, args.runs // 3))))
    target = 1.15 * host + 0.150
    print(f"project: {args.project.relative_to(ROOT) if args.project.is_relative_to(ROOT) else args.project}, "
          f"runs: {args.runs}")
    print(f"{'mode':<28}{'median (ms)':>12}{'x host':>9}")
    for name, value in (("host pytest (baseline)", host), ("warm DockerSandbox", warm),
                        ("fresh container per run", fresh)):
        print(f"{name:<28}{value * 1000:>12.0f}{value / host:>9.2f}")
    verdict = "MET" if warm <= target else "MISSED"
    print(f"target warm <= 1.15 x host + 150 ms = {target * 1000:.0f} ms: {verdict}; "
          f"fresh/warm = {fresh / warm:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
