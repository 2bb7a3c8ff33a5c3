"""llama-server flags on this machine kind: threads, polling, batch, context, flash attention, KV cache type.

    PYTHONPATH=server:sandbox python docs/benchmarks/server-flags/bench_server_flags.py [--size 0.5b] [--reps 2] [--max-tokens 64]

Every flag set gets its own server (started by greenloop's `LocalModelServer`
with the flags as `local_model.server_args`), all running at once but asked one
at a time, reps interleaved. Per rep and set: the repair prompt of
bench_local_server.py read cold (a fresh nonce), answered at temperature 0, then
asked again warm at 0.8. Rates are llama-server's own `timings` (prompt and
generation tokens/s), medians over reps; "same reply" compares the temperature-0
reply with the first set's (flash attention and KV quantization change the
arithmetic).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))  # bench_local_server
from bench_local_server import messages
from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings

FLAG_SETS: dict[str, list[str]] = {
    "defaults": [],  # greenloop's: -t 1, -c 8192, --parallel 1; llama.cpp's: -b 2048 -ub 512, -fa auto, f16 KV
    "-t 2": ["-t", "2"],
    "-t 2 --poll 0": ["-t", "2", "--poll", "0"],
    "-t 1 -tb 2": ["-t", "1", "-tb", "2"],
    "-t 2 -fa off": ["-t", "2", "-fa", "off"],
    "-fa on": ["-fa", "on"],
    "-t 2 -ub 128": ["-t", "2", "-ub", "128"],
    "-t 2 -fa on -ctk q8_0 -ctv q8_0": ["-t", "2", "-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0"],
    "-c 4096": ["-c", "4096"],
}


async def ask(url: str, msgs: list[dict[str, str]], temperature: float, seed: int, max_tokens: int
              ) -> tuple[str, dict[str, Any]]:
    body = {"model": "local", "messages": msgs, "temperature": temperature, "seed": seed,
            "max_tokens": max_tokens}
    async with httpx.AsyncClient(timeout=1800) as http:
        reply = (await http.post(f"{url}/chat/completions", json=body)).json()
    return reply["choices"][0]["message"]["content"], reply.get("timings", {})


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="0.5b")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--sets", default=";".join(FLAG_SETS), help="names of FLAG_SETS, separated by ;")
    parser.add_argument("--write", type=Path)
    args = parser.parse_args(argv)
    names = [n for n in FLAG_SETS if n in args.sets.split(";")]
    servers: dict[str, LocalModelServer] = {}
    results: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    try:
        for name in names:
            settings = LocalModelSettings(size=args.size, server="llama-server", server_args=FLAG_SETS[name])
            servers[name] = LocalModelServer(settings)
            await servers[name].start()
        for rep in range(args.reps):
            for name in names if rep % 2 == 0 else list(reversed(names)):
                msgs = messages(f"flags-{args.size}-{rep}")  # one prompt per rep: replies comparable
                text, cold = await ask(servers[name].base_url, msgs, 0.0, 1, args.max_tokens)
                _, warm = await ask(servers[name].base_url, msgs, 0.8, 2, args.max_tokens)
                results[name].append({"text": text, "prompt_tps": cold.get("prompt_per_second", 0.0),
                                      "gen_tps": statistics.mean([cold.get("predicted_per_second", 0.0),
                                                                  warm.get("predicted_per_second", 0.0)]),
                                      "warm_prompt_n": warm.get("prompt_n"), "cold_prompt_n": cold.get("prompt_n")})
                print(f"  rep {rep} {name}: {json.dumps(results[name][-1] | {'text': text[:40]})}",
                      file=sys.stderr, flush=True)
    finally:
        for server in servers.values():
            await server.stop()
    base_texts = [r["text"] for r in results[names[0]]]
    rows = [f"llama-server flags, Qwen2.5-Coder {args.size}, ~620-token prompt, {args.max_tokens} tokens out, "
            f"{args.reps} interleaved reps, medians (llama-server's own timings).", "",
            "| flags | prompt tok/s (cold) | generation tok/s | prompt tokens read warm | same reply as first |",
            "|---|---|---|---|---|"]
    for name in names:
        mine = results[name]
        same = all(r["text"] == b for r, b in zip(mine, base_texts, strict=False))
        rows.append(f"| `{name}` | {statistics.median(r['prompt_tps'] for r in mine):.0f} "
                    f"| {statistics.median(r['gen_tps'] for r in mine):.1f} | {mine[0]['warm_prompt_n']} "
                    f"| {'yes' if same else 'no'} |")
    text = "\n".join(rows) + "\n"
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
