"""What the early echo stop would have saved on recorded runs: the reply tokens after the point where it stops.

    python benchmarks/echo_stop_savings.py --store .bench/runs.sqlite3 [--store ...]

Reads every function-rung call (`repair_function`, `repair_test`) in the run stores, finds the function the
prompt showed (`## The code to fix: `symbol` in `path` (lines a-b)` and its code block), and feeds the
recorded reply to the rule the round uses (`FunctionForm.known_echo`) a line at a time. A reply the rule
stops would have ended there; the tokens after that point (greenloop's own count) are what it saves. The
table also counts the replies read as unchanged whole (echoes) that the rule did not stop (an echo without
a closed code block, or with a helper beside it), and checks that every stopped reply is an echo whole.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.splice import Target
from greenloop.tokens import count_text

SHOWN = re.compile(r"^## The code to fix: `(?P<symbol>[^`]+)` in `(?P<path>[^`]+)` \(lines (?P<start>\d+)-(?P<end>\d+)\)\n"
                   r"(?P<fence>`{3,})[^\n]*\n(?P<code>.*?)\n(?P=fence)[ \t]*$", re.M | re.S)
STEPS = ("repair_function", "repair_test")


@dataclass(frozen=True)
class Saving:
    echo: bool  # the whole reply is read as the function unchanged
    stopped_at: int | None  # characters of the reply before the rule held (None: never)
    tokens: int  # the reply's tokens (greenloop's count)
    saved: int  # its tokens after the stop


def saving(messages: list[dict[str, str]], reply: str, root: Path = Path("/nonexistent")) -> Saving | None:
    """The rule on one recorded call; None when its prompt shows no function."""
    shown = next((m for msg in messages if msg.get("role") == "user" and (m := SHOWN.search(msg["content"]))), None)
    if shown is None:
        return None
    start, end = int(shown["start"]), int(shown["end"])
    source = "\n" * (start - 1) + shown["code"] + "\n"  # the function at its own lines
    target = Target(shown["path"], shown["symbol"], "function", start, end)
    approach = Approach(FUNCTION, target, "recorded")
    copy = WorkingCopy(root, {target.path: source.encode()})
    try:
        read_reply(approach, copy, reply)
        echo = False
    except ReplyUnchanged:
        echo = True
    except ReplyRejected:
        echo = False
    stopped = next((n + 1 for n, char in enumerate(reply) if char == "\n"
                    and FUNCTION.known_echo(approach, copy, reply[: n + 1])), None)
    total = count_text(reply) if reply else 0
    return Saving(echo, stopped, total, count_text(reply[stopped:]) if stopped is not None else 0)


def calls(store: Path) -> list[tuple[list[dict[str, str]], str]]:
    """(messages, reply) of the function-rung calls in a run store."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = db.execute(f"SELECT data FROM calls WHERE step IN ({','.join('?' * len(STEPS))})", STEPS).fetchall()
    finally:
        db.close()
    out = []
    for (data,) in rows:
        record = json.loads(data)
        if record.get("messages") and record.get("outcome") != "failed":
            out.append((record["messages"], record.get("reply") or ""))
    return out


def table(savings: list[Saving]) -> str:
    echoes = [s for s in savings if s.echo]
    stopped = [s for s in savings if s.stopped_at is not None]
    total = sum(s.tokens for s in savings)
    saved = sum(s.saved for s in stopped)
    wrong = sum(1 for s in stopped if not s.echo)
    return "\n".join([
        "| function-rung replies | echoes | echoes stopped | stopped, not echoes | reply tokens | saved | share |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {len(savings)} | {len(echoes)} | {len(stopped) - wrong} | {wrong} | {total} | {saved} "
        f"| {saved / total:.1%} |" if total else f"| {len(savings)} | 0 | 0 | 0 | 0 | 0 | - |",
    ])


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--store", type=Path, action="append", required=True)
    args = p.parse_args(argv)
    found = [s for store in args.store for messages, reply in calls(store) if (s := saving(messages, reply))]
    text = table(found)
    print(text)
    return text


if __name__ == "__main__":
    main()
