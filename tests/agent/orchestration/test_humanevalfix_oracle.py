"""HumanEvalFix with an oracle model: it returns the right fix only when the buggy code is in its prompt.

All tasks solved shows that retrieval put the right code in front of the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.bench.suites import humanevalfix_task
from tests.agent.conftest import collect, plan, write_project


@pytest.fixture
def make_settings(plan_strategy: Any) -> Any:
    """These tests are about the plan strategy (one JSON DebugPlan per iteration)."""
    return plan_strategy


DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "humanevalfix" / "humanevalfix-python.jsonl"
SAMPLE = 20  # every 8th task: a spread of bug types, small enough for CI


def _tasks() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    return rows[::8][:SAMPLE]


def _workspace(root: Path, task: dict[str, Any]) -> Path:
    # the bench suite's own task builder, plus padding modules so the buggy function is one file among several
    pads = {f"util_{i}.py": f"def helper_{i}(x):\n    return x + {i}\n" for i in range(5)}
    return write_project(root / task["entry_point"], {**pads, **humanevalfix_task(task).files})


def _oracle(tasks: dict[str, dict[str, Any]]) -> Any:
    def answer(request: dict[str, Any]) -> str:
        prompt = "\n".join(str(m.get("content") or "") for m in request["messages"])
        for entry, task in tasks.items():
            lines = [line.strip() for line in task["buggy_solution"].splitlines() if line.strip()]
            if f"test_{entry}" in prompt and all(line in prompt for line in lines):
                edit = {"kind": "edit", "path": f"{entry}.py", "search": task["buggy_solution"],
                        "replace": task["canonical_solution"]}
                return plan(edit, diagnosis=f"{entry} has a bug")
        return plan(diagnosis="I cannot see the code that fails")

    return answer


async def test_oracle_solves_all_sampled_tasks(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    tasks = {t["entry_point"]: t for t in _tasks()}
    scripted_llm.script(_oracle(tasks), step="debug_plan")
    unsolved = []
    for entry, task in tasks.items():
        ws = _workspace(tmp_path, task)
        settings = make_settings(ws, backend="local", loop={"diagnosis": False, "max_iterations": 2})
        _, done = await collect(fix(FixRequest(ws), settings))
        if done.outcome != "green":
            unsolved.append(f"{entry}: {done.outcome} {done.summary}")
    assert unsolved == [], unsolved
