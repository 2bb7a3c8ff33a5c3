"""`greenloop runs list` reads whole at 80 columns: ids, outcomes and numbers are never cut."""

from __future__ import annotations

from rich.console import Console

from greenloop.cli.run_list import run_list_table
from greenloop.run_records import RunSummary


def summary(**kw: object) -> RunSummary:
    fields: dict[str, object] = {
        "id": "20261125-142052-fc1c13", "mode": "fix", "model": "local", "config_name": "default",
        "started_at": 0.0, "outcome": "green", "iterations": 1, "prompt_tokens": 700, "completion_tokens": 60,
        "cost": 0.0, "seconds": 6.2, "summary": "", "verdict": None,
    }
    return RunSummary.model_validate({**fields, **kw})


def test_the_widest_values_fit_80_columns() -> None:
    runs = [
        summary(),
        summary(id="20261125-142026-c668d5", mode="generate", model="qwen2.5-coder-1.5b-instruct-q4_k_m",
                config_name="candidates-4", outcome="already_green", iterations=12, prompt_tokens=1_234_000,
                cost=12.5, seconds=1830.0, verdict="perfect"),
        summary(id="20261125-142000-000000", outcome=None, seconds=None),
    ]
    console = Console(width=80, record=True, color_system=None)
    console.print(run_list_table(runs, console.width))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    for whole in ("20261125-142052-fc1c13", "20261125-142026-c668d5", "already_green", "unfinished", "1.2M",
                  "12.50", "1830", "perfect"):
        assert whole in text, whole


def test_model_and_config_get_the_room_that_is_left() -> None:
    run = summary(mode="generate", model="qwen2.5-coder-1.5b-instruct-q4_k_m", config_name="candidates-4")
    console = Console(width=80, record=True, color_system=None)
    console.print(run_list_table([run], console.width))
    assert "generate: qwen2.5-co…" in console.export_text()
