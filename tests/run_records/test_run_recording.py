"""A real fix run (scripted model, local sandbox) lands in the run store as it goes; the CLI reads it back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import Done
from greenloop.cli import main
from greenloop.run_records import RunStore, record_verdict, store_path
from greenloop.settings import Settings, load_settings

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PLAN = {
    "diagnosis": "add subtracts",
    "actions": [
        {"kind": "edit", "path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    ws = tmp_path / "calc"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)
    return ws


def _settings(ws: Path, scripted_llm: Any) -> Settings:
    return load_settings(
        ws,
        {
            "llm": {
                "base_url": scripted_llm.base_url,
                "api_key": "test-key",
                "model": "scripted",
                "max_retries": 0,
            },
            "local_model": {"enabled": False},
            "sandbox": {"backend": "local"},
            "runs": {"label": "plain"},
            "loop": {"strategy": "plan"},  # the recorded steps below are the plan loop's
        },
    )


async def _fix(ws: Path, settings: Settings) -> Done:
    done = None
    async for event in fix(FixRequest(workspace=ws), settings):
        if isinstance(event, Done):
            done = event
    assert done is not None
    return done


async def test_fix_run_is_recorded(
    project: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_llm.script("add returns a - b instead of a + b", step="diagnosis")
    scripted_llm.script(json.dumps(PLAN), step="debug_plan")
    settings = _settings(project, scripted_llm)
    done = await _fix(project, settings)
    assert done.outcome == "green"

    with RunStore.open(store_path(settings, project)) as store:
        detail = store.get_run(done.run_id)
    assert detail.mode == "fix" and detail.outcome == "green" and detail.model == "scripted"
    assert detail.config_name == "plain" and detail.seed == settings.llm.seed
    assert detail.iterations == done.iterations == 1
    assert (
        (detail.prompt_tokens, detail.completion_tokens)
        == (done.prompt_tokens, done.completion_tokens)
        != (0, 0)
    )
    kinds = [e["kind"] for e in detail.events]
    assert (
        kinds[:2] == ["environment", "tests_ran"] and kinds[-1] == "done" and "plan" in kinds
        and "diagnosis_delta" not in kinds
    )
    assert sorted(c["step"] for c in detail.calls) == ["debug_plan", "diagnosis"]
    assert all(c["iteration"] == 1 and c["messages"] and c["reply"] for c in detail.calls)
    assert detail.config["llm"]["base_url"] == scripted_llm.base_url
    assert "test-key" not in (project / ".greenloop" / "runs.sqlite3").read_bytes().decode("latin-1")

    record_verdict(settings, project, done.run_id, "works")
    out = project.parent / "pairs.jsonl"
    args = ["runs", "-C", str(project), "--json"]
    assert main([*args, "export", "--out", str(out), "--yes"]) == 0
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["meta"]["step"] for p in pairs] == ["diagnosis", "debug_plan"]
    assert json.loads(pairs[1]["completion"]) == PLAN
    _check_cli(project, done, capsys)


def _check_cli(project: Path, done: Done, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    base = ["runs", "-C", str(project), "--json"]
    assert main([*base, "list"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == [done.run_id] and listed[0]["verdict"] == "works"
    assert main([*base, "verdict", done.run_id[:-3], "perfect"]) == 0
    capsys.readouterr()
    assert main([*base, "show", done.run_id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["verdict"] == "perfect" and shown["events"][-1]["kind"] == "done"
    assert main([*base, "stats", "--by", "config"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["group"], row["runs"], row["green"], row["verdicts"]) == (
        {"config": "plain"},
        1,
        1,
        {"perfect": 1},
    )
    assert main(["runs", "-C", str(project), "show", "nope"]) == 2  # a clear error, not a traceback
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["runs", "-C", str(project), "list"]) == 0
    assert done.run_id[:8] in capsys.readouterr().out


async def test_corrupt_store_does_not_stop_the_run(project: Path, scripted_llm: Any) -> None:
    scripted_llm.script(json.dumps(PLAN), step="debug_plan")
    scripted_llm.script("diagnosis text", step="diagnosis")
    (project / ".greenloop").mkdir()
    (project / ".greenloop" / "runs.sqlite3").write_bytes(b"garbage " * 1000)
    messages: list[str] = []
    async for event in fix(FixRequest(workspace=project), _settings(project, scripted_llm)):
        if event.kind == "message":
            messages.append(event.text)
        last = event
    assert isinstance(last, Done) and last.outcome == "green"
    assert any("could not record" in m and "move it aside" in m for m in messages)
