"""benchmarks/echo_stop_savings.py: the echo stop replayed on recorded function-rung calls of a run store."""

from __future__ import annotations

from pathlib import Path

from tests.bench.scripts import script

from greenloop.run_records.store import RunStore

savings = script("echo_stop_savings")
CODE = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result"
PROMPT = f"The tests fail.\n\n## The code to fix: `total` in `shop.py` (lines 4-8)\n```python\n{CODE}\n```\nFix it."
PROSE = "".join(f"Point {n}: the loop adds item number {n} as it should.\n" for n in range(1, 9))
ECHO = f"Here it is:\n```python\n{CODE}\n```\n{PROSE}"
FIX = f"```python\n{CODE.replace('result = 0', 'result = 1')}\n```\n{PROSE}"


def test_an_echo_saves_the_tokens_after_its_block_and_a_fix_saves_none() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": PROMPT}]
    echo = savings.saving(messages, ECHO)
    assert echo.echo and ECHO[: echo.stopped_at].endswith(f"{CODE}\n```\n")
    assert 0 < echo.saved < echo.tokens and echo.saved >= savings.count_text(PROSE) - 1
    fix = savings.saving(messages, FIX)
    assert not fix.echo and fix.stopped_at is None and fix.saved == 0
    assert savings.saving([{"role": "user", "content": "no function shown"}], ECHO) is None


def test_the_table_counts_a_stores_function_calls(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with RunStore.open(store) as runs:
        runs.start_run("r1", mode="fix", workspace="w", config={}, seed=1, model="m", started_at=0.0)
        messages = [{"role": "user", "content": PROMPT}]
        for reply, step in ((ECHO, "repair_function"), (FIX, "repair_function"), (ECHO, "diagnose")):
            runs.add_call("r1", {"step": step, "outcome": "ok", "messages": messages, "reply": reply})
    text = savings.main(["--store", str(store)])
    row = text.splitlines()[2].split("|")[1:-1]
    assert [cell.strip() for cell in row[:4]] == ["2", "1", "1", "0"]  # the diagnosis call is not the rung's
    assert int(row[5]) > 0 and row[6].strip().endswith("%")
