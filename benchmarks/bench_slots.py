"""The embedded server's slots (`local_model.parallel`): aggregate tokens a second and candidates a minute at 1, 2, 4, 8.

    nice -n -15 python benchmarks/bench_slots.py [--slots 1,2,4,8] [--candidates 8] [--reps 2]
        [--max-tokens 300] [--threads 1] [--n-ctx 4096] [--size 1.5b]
        [--request docs/benchmarks/prebuilt-server/request.json] [--base-url URL] [--write FILE.md]

One round as the fix loop sends it: `--candidates` requests of one repair prompt (REQUEST.json, a request
greenloop sent), the first greedy and the rest at 0.8, each its own seed, sent through greenloop's own
client with `llm.concurrency` = the slots, so at most that many are decoded at once (continuous batching)
and the rest wait for a free slot. Each slot count gets its own server, started by greenloop's
`LocalModelServer` with `--parallel N` and N x `--n-ctx` (the flags a run gets), and each round's prompt
opens with a nonce, so it is read cold as a new round's prompt is. Reps run interleaved (rep -> slots),
so machine load spreads over all slot counts; the 1-slot row is the baseline of the same run.

Reported per slot count (medians over reps): seconds to the first candidate and to all, completion tokens,
aggregate tokens/s (all completion tokens / the round's seconds) and candidates a minute. `--base-url`
sends to a running server instead (one slot count; to try the script against a scripted server).
Do not run it on a busy machine: every number is a share of the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from greenloop.llm.client import LLMClient
from greenloop.llm.local_server import LocalModelServer
from greenloop.llm.records import CallRecord
from greenloop.settings import LLMSettings, LocalModelSettings

REQUEST = Path(__file__).resolve().parent.parent / "docs" / "benchmarks" / "prebuilt-server" / "request.json"


@dataclass(frozen=True)
class RoundTime:
    """One round of candidates at one slot count."""

    slots: int
    seconds: float  # from the first request sent to the last reply
    first: float  # to the first reply complete
    tokens: int  # completion tokens of all candidates
    candidates: int


@dataclass(frozen=True)
class Row:
    slots: int
    reps: int
    candidates: int
    first_s: float
    all_s: float
    tokens: int
    tokens_per_s: float
    per_minute: float


def summarize(rounds: list[RoundTime]) -> list[Row]:
    """One row per slot count, medians over its rounds, in slot order."""
    rows = []
    for slots in sorted({r.slots for r in rounds}):
        mine = [r for r in rounds if r.slots == slots]
        seconds = statistics.median(r.seconds for r in mine)
        tokens = int(statistics.median(r.tokens for r in mine))
        count = mine[0].candidates
        rows.append(Row(slots, len(mine), count, round(statistics.median(r.first for r in mine), 1), round(seconds, 1),
                        tokens, round(tokens / seconds, 1) if seconds else 0.0,
                        round(count / seconds * 60, 2) if seconds else 0.0))
    return rows


def table(rows: list[Row]) -> str:
    """A Markdown table; `x 1 slot`: candidates a minute over the 1-slot row of the same run."""
    base = next((r.per_minute for r in rows if r.slots == 1), None)
    out = ["| slots | reps | candidates | first (s) | all (s) | completion tokens | tokens/s | candidates/min "
           "| x 1 slot |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r.per_minute / base:.2f}" if base else "-"
        out.append(f"| {r.slots} | {r.reps} | {r.candidates} | {r.first_s} | {r.all_s} | {r.tokens} "
                   f"| {r.tokens_per_s} | {r.per_minute} | {ratio} |")
    return "\n".join(out)


def prompt(request: Path) -> list[dict[str, str]]:
    """The request's messages, the user's opening with a nonce (read cold, like a new round's prompt)."""
    messages: list[dict[str, str]] = json.loads(request.read_text())["messages"]
    *head, last = messages
    return [*head, {**last, "content": f"(round {uuid.uuid4().hex[:8]})\n{last['content']}"}]


async def one_round(base_url: str, slots: int, args: argparse.Namespace) -> RoundTime:
    """`args.candidates` requests of one prompt through greenloop's client, `slots` at once."""
    records: list[CallRecord] = []
    settings = LLMSettings(base_url=base_url, max_tokens=args.max_tokens, concurrency=slots, timeout=3600,
                           first_token_timeout=3600, max_retries=0)
    client = LLMClient(settings, base_url=base_url, api_key=None, sink=records.append, slots=slots)
    messages = prompt(args.request)
    done: list[float] = []
    started = time.perf_counter()

    async def candidate(index: int) -> None:
        await client.complete(messages, step="bench_slots", seed=1000 + index, temperature=0.0 if index == 0 else 0.8)
        done.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(candidate(i) for i in range(args.candidates)))
    finally:
        await client.aclose()
    return RoundTime(slots, time.perf_counter() - started, min(done), sum(r.completion_tokens for r in records),
                     args.candidates)


async def measure(args: argparse.Namespace) -> list[RoundTime]:
    rounds = []
    for rep in range(args.reps):
        for slots in args.slots:
            if args.base_url:
                rounds.append(await one_round(args.base_url, slots, args))
                continue
            local = LocalModelSettings(size=args.size, parallel=slots, n_ctx=args.n_ctx, threads=args.threads,
                                       discover=False)
            async with LocalModelServer(local, alias="local") as server:
                rounds.append(await one_round(server.base_url, slots, args))
            print(f"rep {rep + 1}, {slots} slot(s): {rounds[-1].seconds:.1f} s", flush=True)
    return rounds


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 4, 8])
    p.add_argument("--candidates", type=int, default=8)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=300)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-ctx", type=int, default=4096, help="context of each slot")
    p.add_argument("--size", choices=["0.5b", "1.5b"], default="1.5b")
    p.add_argument("--request", type=Path, default=REQUEST)
    p.add_argument("--base-url", default=None, help="a running server instead of the embedded one")
    p.add_argument("--write", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> str:
    args = parse(argv)
    text = table(summarize(asyncio.run(measure(args))))
    print(text)
    if args.write:
        args.write.write_text(text + "\n")
    return text


if __name__ == "__main__":
    main()
