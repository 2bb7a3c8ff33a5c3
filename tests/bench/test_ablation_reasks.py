"""benchmarks/ablation_reasks.py on a real run: the 1.5B model's calls and candidates on youtube-dl-7
(realbugs bench, 2026-11-28; messages cut to their openings but the follow-ups), in a run store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.bench.scripts import script

from greenloop.run_records import RunStore

FIXTURES = Path(__file__).parent / "fixtures" / "reasks"
reasks = script("ablation_reasks")


@pytest.fixture
def bench_out(tmp_path: Path) -> Path:
    out = tmp_path / "bench-out"
    (out / ".bench").mkdir(parents=True)
    calls = [json.loads(line) for line in (FIXTURES / "calls.jsonl").read_text().splitlines()]
    with RunStore.open(out / ".bench" / "runs.sqlite3") as store:
        store.start_run(calls[0]["run_id"], mode="fix", workspace="ws", config={}, seed=1234, model="m",
                        started_at=0.0, config_label="first-green")
        for call in calls:
            store.add_call(call["run_id"], call)
        for line in (FIXTURES / "events.jsonl").read_text().splitlines():
            event = json.loads(line)
            store.add_event(event["run_id"], event)
    return out


def test_each_follow_up_is_told_by_why_and_by_what_became_of_its_candidate(bench_out: Path) -> None:
    rows = {r.why: r for r in reasks.tally([bench_out])}
    echo, code, repeat = rows["echo"], rows["code please"], rows["repeat"]
    assert (echo.asked, echo.tested, echo.green) == (3, 0, 0)  # the model echoed the function again each time
    assert 90 < echo.seconds < 110
    assert (code.asked, code.tested) == (5, 4)  # prose first, then the code: four were tested
    assert (repeat.asked, repeat.tested) == (2, 2)
    assert "| echo | 3 | 0 | 0 |" in reasks.markdown(list(rows.values()))


def test_a_folder_without_a_run_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert reasks.main([str(tmp_path)]) == 2
    assert "not a bench --out folder" in capsys.readouterr().err
