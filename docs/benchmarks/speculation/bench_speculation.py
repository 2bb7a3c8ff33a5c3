"""Speculative decoding for the embedded model: recorded repair requests replayed with and without it.

    PYTHONPATH=server:sandbox python docs/benchmarks/speculation/bench_speculation.py REQUESTS.jsonl [--sample 12] [--size 1.5b] [--sets A;B] [--write OUT.md]

REQUESTS is a cassette (`llm.cassette`, one JSON row per call with its `request`): real prompts the
loop sent, so replies are as long as the loop's and copy as much of the prompt as the loop's do,
which is where n-gram speculation (llama.cpp's `--spec-type ngram-*`: drafts taken from text already
in the context, no second model) can save time. A seeded sample stratified by temperature is asked
of one server per flag set (greenloop's `LocalModelServer`, the flags as `local_model.server_args`),
all running at once but asked one at a time, the set order alternating per request. Per set: total
and median wall seconds, the median per-request ratio to the first set, generation tokens/s from
llama-server's own `timings`, drafted and accepted tokens, and how many replies equal the first
set's (at temperature 0 they should; above it a draft changes how the seed's random numbers are
used, so an equal reply is not expected, only an equally good one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings

FLAG_SETS: dict[str, list[str]] = {
    "defaults": [],
    "ngram-simple": ["--spec-type", "ngram-simple"],
    "ngram-map-k": ["--spec-type", "ngram-map-k"],
    "ngram-mod": ["--spec-type", "ngram-mod"],
}


def sample(path: Path, n: int, seed: int) -> list[dict[str, Any]]:
    """n requests, spread evenly over the temperatures the loop used (seeded)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_temperature: dict[float, list[dict[str, Any]]] = {}
    for row in rows:
        request = row.get("request") or {}
        if request.get("messages"):
            by_temperature.setdefault(float(request.get("temperature", 0.0)), []).append(request)
    rng = random.Random(seed)
    groups = [rng.sample(g, len(g)) for _, g in sorted(by_temperature.items())]
    picked: list[dict[str, Any]] = []
    while len(picked) < n and any(groups):
        for group in groups:
            if group and len(picked) < n:
                picked.append(group.pop())
    return picked


async def ask(http: httpx.AsyncClient, url: str, request: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in request.items() if k not in ("stream", "stream_options")} | {"model": "local"}
    start = time.monotonic()
    reply = (await http.post(f"{url}/chat/completions", json=body)).json()
    timings = reply.get("timings", {})
    return {"seconds": time.monotonic() - start, "text": reply["choices"][0]["message"]["content"],
            "temperature": body.get("temperature", 0.0), "out": timings.get("predicted_n", 0),
            "gen_tps": timings.get("predicted_per_second", 0.0), "drafted": timings.get("draft_n", 0),
            "accepted": timings.get("draft_n_accepted", 0)}


def table(names: list[str], results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    base = results[names[0]]
    rows = [f"Speculative decoding, Qwen2.5-Coder {args.size}, {len(base)} recorded loop requests "
            f"({args.requests.name}, seed {args.seed}), threads {args.threads}, one server per set, set order "
            "alternating per request.", "",
            "| flags | total s | median s | median ratio to first | generation tok/s (median) | tokens out "
            "| drafted / accepted | same reply as first (T=0 / T>0) |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name in names:
        mine = results[name]
        ratio = statistics.median(m["seconds"] / b["seconds"] for m, b in zip(mine, base, strict=True))
        cold = [m["text"] == b["text"] for m, b in zip(mine, base, strict=True) if b["temperature"] == 0]
        warm = [m["text"] == b["text"] for m, b in zip(mine, base, strict=True) if b["temperature"] > 0]
        rows.append(f"| `{name}` | {sum(m['seconds'] for m in mine):.0f} "
                    f"| {statistics.median(m['seconds'] for m in mine):.1f} | {ratio:.2f} "
                    f"| {statistics.median(m['gen_tps'] for m in mine):.1f} | {sum(m['out'] for m in mine)} "
                    f"| {sum(m['drafted'] for m in mine)} / {sum(m['accepted'] for m in mine)} "
                    f"| {sum(cold)} of {len(cold)} / {sum(warm)} of {len(warm)} |")
    return "\n".join(rows) + "\n"


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("requests", type=Path, help="a cassette .jsonl of recorded requests")
    parser.add_argument("--sample", type=int, default=12)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--size", default="1.5b")
    parser.add_argument("--threads", type=int, default=LocalModelSettings().threads)
    parser.add_argument("--sets", default="defaults;ngram-simple", help="names of FLAG_SETS, separated by ;")
    parser.add_argument("--write", type=Path, help="the table as Markdown; its .json beside it keeps every reply")
    args = parser.parse_args(argv)
    names = [n for n in args.sets.split(";") if n in FLAG_SETS]
    requests = sample(args.requests, args.sample, args.seed)
    servers: dict[str, LocalModelServer] = {}
    results: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    try:
        for name in names:
            settings = LocalModelSettings(size=args.size, server="llama-server", threads=args.threads,
                                          server_args=FLAG_SETS[name])
            servers[name] = LocalModelServer(settings)
            await servers[name].start()
        async with httpx.AsyncClient(timeout=1800) as http:
            for i, request in enumerate(requests):
                for name in names if i % 2 == 0 else list(reversed(names)):
                    results[name].append(await ask(http, servers[name].base_url, request))
                    shown = {k: v for k, v in results[name][-1].items() if k != "text"}
                    print(f"  request {i} {name}: {json.dumps(shown)}", file=sys.stderr, flush=True)
    finally:
        for server in servers.values():
            await server.stop()
    text = table(names, results, args)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
        args.write.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
