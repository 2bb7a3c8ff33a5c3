"""benchmarks/bench_slots.py: its table from round times, and a round sent through the client, slots at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.bench.scripts import script
from tests.support.scripted_llm import Reply, ScriptedLLM

bench = script("bench_slots")
pytestmark = pytest.mark.timeout(60)


def test_rows_are_medians_per_slot_count_and_the_one_slot_row_is_the_baseline() -> None:
    rounds = [bench.RoundTime(1, 60.0, 10.0, 800, 8), bench.RoundTime(1, 80.0, 12.0, 900, 8),
              bench.RoundTime(4, 30.0, 20.0, 840, 8), bench.RoundTime(4, 34.0, 24.0, 860, 8)]
    rows = bench.summarize(rounds)
    assert [(r.slots, r.reps, r.all_s, r.first_s, r.tokens) for r in rows] == [(1, 2, 70.0, 11.0, 850),
                                                                                 (4, 2, 32.0, 22.0, 850)]
    assert rows[0].tokens_per_s == 12.1 and rows[0].per_minute == 6.86
    assert rows[1].tokens_per_s == 26.6 and rows[1].per_minute == 15.0
    lines = bench.table(rows).splitlines()
    assert lines[2].endswith("| 6.86 | 1.00 |") and lines[3].endswith("| 15.0 | 2.19 |")


def test_a_round_goes_through_the_client_at_most_slots_at_once(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scripted_llm.script(Reply("```python\ndef f():\n    return 1\n```\n", delay=0.3))
    request = tmp_path / "request.json"
    request.write_text('{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "fix f"}]}')
    text = bench.main(["--base-url", scripted_llm.base_url, "--slots", "1,2", "--candidates", "4", "--reps", "1",
                       "--request", str(request), "--write", str(tmp_path / "table.md")])
    sent = scripted_llm.requests
    assert len(sent) == 8 and all(r.messages[-1]["content"].startswith("(round ") for r in sent)
    one, two = sent[:4], sent[4:]  # one slot: one after another; two: two at a time
    assert one[1].at - one[0].at >= 0.25 and two[1].at - two[0].at < 0.2 and two[2].at - two[0].at >= 0.25
    assert [r.body["temperature"] for r in one] == [0.0, 0.8, 0.8, 0.8]
    rows = text.splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == ["1", "2"]
    assert (tmp_path / "table.md").read_text().strip() == text
