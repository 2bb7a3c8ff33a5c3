"""`greenloop bench --model oracle`: the bench serves the oracle on 127.0.0.1, each cell asks about its own case,
and the server is gone when the bench ends (real Docker sandbox, real HTTP)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from greenloop.bench import DEFAULT_CONFIG, BenchOptions, run_bench
from greenloop.bench.oracle_server import oracle_model
from greenloop.bench.suites import load_suite
from greenloop.errors import GreenloopError
from greenloop.settings import Settings

ROWS = [
    {"task_id": "Tiny/0", "entry_point": "add", "declaration": "def add(a, b):\n",
     "buggy_solution": "    return a - b\n", "canonical_solution": "    return a + b\n",
     "test": "def check(add):\n    assert add(1, 2) == 3\n    assert add(2, 2) == 4\n"},
    {"task_id": "Tiny/1", "entry_point": "largest", "declaration": "def largest(xs):\n",
     "buggy_solution": "    return sorted(xs)[0]\n", "canonical_solution": "    return max(xs)\n",
     "test": "def check(largest):\n    assert largest([3, 9, 4]) == 9\n    assert largest([5]) == 5\n"},
]


def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


@pytest.mark.docker
async def test_each_cell_is_answered_with_its_own_cases_fix(tmp_path: Path) -> None:
    base = Settings(llm={"model": "oracle", "max_retries": 0}, local_model={"enabled": False},
                    sandbox={"backend": "docker"}, loop={"mutants": 0, "candidates": 1, "max_iterations": 2})
    options = BenchOptions(suite="humanevalfix", out_dir=tmp_path / "out", configs=[DEFAULT_CONFIG],
                           suite_file=suite_file(tmp_path))
    run = await run_bench(options, base)
    verdicts = {r.task: (r.outcome, (r.extra.get("verdict") or {}).get("name")) for r in run.results}
    assert verdicts == {"Tiny/0": ("green", "same"), "Tiny/1": ("green", "same")}
    assert all(r.model == "oracle" and r.prompt_tokens > 0 for r in run.results)


async def test_the_oracle_is_served_for_the_bench_only_and_never_on_a_cluster(tmp_path: Path) -> None:
    tasks = load_suite("humanevalfix", suite_file(tmp_path)).tasks
    async with oracle_model(Settings(llm={"model": "oracle"}), tasks) as settings:
        where = urlsplit(settings.llm.base_url or "")
        assert where.hostname == "127.0.0.1" and not settings.local_model.enabled
        socket.create_connection((where.hostname, where.port or 0), timeout=2).close()
    with pytest.raises(OSError):
        socket.create_connection((where.hostname, where.port or 0), timeout=2).close()
    options = BenchOptions(suite="humanevalfix", out_dir=tmp_path / "c", configs=[DEFAULT_CONFIG],
                           suite_file=suite_file(tmp_path), cluster="auto", jobs=0)
    with pytest.raises(GreenloopError, match=r"127\.0\.0\.1 only"):
        await run_bench(options, Settings(llm={"model": "oracle"}))
