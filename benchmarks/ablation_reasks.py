"""What asking the model again earns: each follow-up request of a candidate, by why it was asked, and what became of it.

A candidate's request is asked again in the same conversation (agent/repair/candidate_round.py, approach.py) when the reply
- was prose without code ("code please": `CODE_PLEASE`), or
- gave a change already tested ("repeat": `TRIED_BEFORE`);
until 0e87d75 also when it gave the code already in the file ("echo"; removed on these counts: decision
repair-echo), which older run stores still hold.
Read from bench folders' run stores (read-only): each such call, matched to its candidate by run and seed, counts
as "tested" when the candidate was then tested, "green" when it turned the tests green, and its seconds are the
model's (calls served from a memo cassette are counted, not timed).

    python3 benchmarks/ablation_reasks.py BENCH_FOLDER... [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ablation_records import _read_only_uri

WHY = (  # what the follow-up says -> why it was asked (approach.py's CODE_PLEASE, candidate_round.py's TRIED_BEFORE)
    ("Now give the whole corrected", "code please"),
    ("is the code already in the file", "echo"),
    ("That change was tested already", "repeat"),
)


@dataclass
class Tally:
    """One kind of follow-up over the runs read."""

    why: str
    asked: int = 0  # follow-up calls
    tested: int = 0  # of them, the candidate was then tested (the follow-up's reply was usable)
    green: int = 0  # of those, the candidate turned the tests green
    seconds: float = 0.0  # model seconds of the follow-ups that were not served from a memo


def why_asked(messages: list[dict[str, str]]) -> str:
    """Why a call is a follow-up ("" for a first request)."""
    if len(messages) < 4 or messages[-2].get("role") != "assistant":
        return ""
    last = messages[-1].get("content", "")
    return next((why for words, why in WHY if words in last), "")


def tally(folders: list[Path]) -> list[Tally]:
    found = {why: Tally(why) for _, why in WHY}
    for folder in folders:
        store = folder / ".bench" / "runs.sqlite3"
        if not store.is_file():
            raise FileNotFoundError(f"{folder}: no .bench/runs.sqlite3 (not a bench --out folder)")
        db = sqlite3.connect(_read_only_uri(store), uri=True)
        try:
            outcome = _candidates(db)
            for run_id, data in db.execute("SELECT run_id, data FROM calls ORDER BY run_id, seq"):
                call = json.loads(data)
                why = why_asked(call.get("messages") or [])
                if not why:
                    continue
                t = found[why]
                t.asked += 1
                status, green = outcome.get((run_id, call.get("seed")), ("", False))
                t.tested += status == "tested"
                t.green += green
                t.seconds += 0.0 if call.get("cached") else float(call.get("latency") or 0.0)
        finally:
            db.close()
    return list(found.values())


def _candidates(db: sqlite3.Connection) -> dict[tuple[str, Any], tuple[str, bool]]:
    """(run, seed) -> the candidate's status and whether it was green."""
    out: dict[tuple[str, Any], tuple[str, bool]] = {}
    for run_id, data in db.execute("SELECT run_id, data FROM events WHERE kind = 'candidate_tested'"):
        event = json.loads(data)
        if event.get("seed") is not None:
            out[(run_id, event["seed"])] = (str(event.get("status", "")), bool(event.get("green")))
    return out


def markdown(rows: list[Tally]) -> str:
    lines = ["| asked again because | follow-ups | then tested | green | model seconds |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {r.why} | {r.asked} | {r.tested} | {r.green} | {r.seconds:.0f} |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    try:
        rows = tally(args.folders)
    except (OSError, sqlite3.Error) as exc:
        print(f"ablation_reasks: {exc}", file=sys.stderr)
        return 2
    print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
