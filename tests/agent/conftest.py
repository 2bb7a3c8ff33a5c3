"""Fixtures for the agent's tests: small projects on disk and settings pointing at the scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateAsked, CandidateTested, Done, Event
from greenloop.settings import Settings, load_settings

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
CALC_TEST = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
FIX_ADD = {"kind": "edit", "path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}


def write_project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def calc_project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "calc project", {"calc.py": CALC, "test_calc.py": CALC_TEST})


@pytest.fixture
def make_settings(tmp_path: Path, scripted_llm: Any) -> Callable[..., Settings]:
    def make(workspace: Path, backend: str = "docker", **sections: dict[str, Any]) -> Settings:
        overrides: dict[str, Any] = {
            "llm": {"base_url": scripted_llm.base_url, "api_key": "test-key", "max_retries": 0},
            "sandbox": {"backend": backend, "test_timeout": 120},
            "runs": {"store": str(tmp_path / "runs.sqlite3")},
        }
        for name, values in sections.items():
            overrides.setdefault(name, {}).update(values)
        return load_settings(workspace, overrides)

    return make


def plan(*actions: dict[str, Any], diagnosis: str = "add subtracts instead of adding") -> str:
    return json.dumps({"diagnosis": diagnosis, "actions": list(actions)})


async def collect(events: AsyncIterator[Event]) -> tuple[list[Event], Done]:
    seen: list[Event] = []
    async for event in events:
        seen.append(event)
    assert isinstance(seen[-1], Done), f"last event is {seen[-1].kind}"
    return seen, seen[-1]


async def fixed_by_edits(ws: Path, scripted_llm: Any, settings: Settings, wrong: str) -> tuple[list[Event], str]:
    """`fix` with the model scripted to give a wrong function (`wrong`, its reply): green by a small edit
    found before any model call; the model's own round on the same failure then gives no green (issue 58:
    a small edit's green does not end the run), so the small edit is offered labelled plausible, and nothing
    is on disk. The events, and the changed file's new text."""
    scripted_llm.script(wrong)
    before = tree_bytes(ws)
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    green = next(i for i, e in enumerate(events) if isinstance(e, CandidateTested) and e.green)
    assert isinstance(events[green], CandidateTested) and events[green].route == "small_edits"
    assert all(e.route == "small_edits" for e in events[:green] if isinstance(e, CandidateAsked))  # no model call before
    assert done.changes.kind != "model" and done.changes.risk == "plausible", done.changes
    assert "the model's own round" in done.changes.risk_reason
    assert tree_bytes(ws) == before  # nothing on disk until the person accepts
    return events, done.changes.files[0].after or ""


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events if e.kind != "diagnosis_delta"]


@pytest.fixture
def plan_strategy(make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """`make_settings` for `loop.strategy = "plan"` (the JSON DebugPlan loop), unless a test says otherwise."""

    def make(workspace: Path, backend: str = "docker", **sections: dict[str, Any]) -> Settings:
        sections["loop"] = {"strategy": "plan", **sections.get("loop", {})}
        return make_settings(workspace, backend, **sections)

    return make
