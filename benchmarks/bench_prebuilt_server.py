"""xllamacpp's prebuilt llama.cpp server against the source-built llama-server, on greenloop's repair prompt.

    nice -n -15 python benchmarks/bench_prebuilt_server.py --request REQUEST.json [--reps 3]
        [--threads 2] [--llama-server PATH] [--size 1.5b] [--max-tokens 400] [--write FILE.md]

REQUEST.json is one chat request greenloop sent (a repair prompt, as a scripted
server or a cassette recorded it). The two servers alternate, A B A B ..., in one
run; each rep starts its server with greenloop's own `LocalModelServer` (the flags
the embedded model gets, `--threads` as given), times the start until `GET
/v1/models` answers, sends the request once (cold prompt cache, temperature 0,
seed 1, not streamed), reads llama.cpp's own `timings` (prompt and generation
tokens/s), the server process's peak RSS (`VmHWM`), and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from greenloop.llm.local_binary import built_server, xllamacpp_version
from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings


@dataclass
class Rep:
    server: str
    rep: int
    startup_s: float
    prompt_tokens: int
    prompt_tps: float
    gen_tokens: int
    gen_tps: float
    request_s: float
    peak_rss_mb: float
    reply: str


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def one_rep(name: str, settings: LocalModelSettings, body: dict[str, Any], rep: int) -> Rep:
    started = time.perf_counter()
    async with LocalModelServer(settings, alias="local") as server:
        startup = time.perf_counter() - started
        assert server.choice is not None and server.process is not None
        assert server.choice.kind == settings.server, server.choice.reason  # no silent fallback
        sent = time.perf_counter()
        async with httpx.AsyncClient(timeout=1800) as http:
            response = await http.post(f"{server.base_url}/chat/completions", json=body)
        response.raise_for_status()
        took = time.perf_counter() - sent
        reply = response.json()
        timings = reply["timings"]
        rss = peak_rss_mb(server.process.pid)
    return Rep(name, rep, startup, int(timings["prompt_n"]), float(timings["prompt_per_second"]),
               int(timings["predicted_n"]), float(timings["predicted_per_second"]), took, rss,
               reply["choices"][0]["message"]["content"])


def request_body(path: Path, max_tokens: int) -> dict[str, Any]:
    sent = json.loads(path.read_text())
    return {"model": "local", "messages": sent["messages"], "temperature": 0.0, "seed": 1,
            "max_tokens": max_tokens, "stream": False}


def version_of(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False)
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("version")]
    return lines[0] if lines else "unknown"


def median(reps: list[Rep], field: str) -> float:
    return statistics.median(float(getattr(r, field)) for r in reps)


def table(reps: list[Rep]) -> str:
    rows = ["| rep | server | start-up s | prompt tokens | prompt tok/s | generated tokens | gen tok/s "
            "| request s | peak RSS MB |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    rows += [f"| {r.rep} | {r.server} | {r.startup_s:.2f} | {r.prompt_tokens} | {r.prompt_tps:.1f} | "
             f"{r.gen_tokens} | {r.gen_tps:.1f} | {r.request_s:.1f} | {r.peak_rss_mb:.0f} |" for r in reps]
    return "\n".join(rows)


def summary(reps: list[Rep], names: list[str]) -> str:
    fields = [("startup_s", "start-up s"), ("prompt_tps", "prompt tok/s"), ("gen_tps", "gen tok/s"),
              ("request_s", "request s"), ("peak_rss_mb", "peak RSS MB")]
    rows = ["| median of | " + " | ".join(names) + f" | {names[1]} / {names[0]} |",
            "|---|" + "---:|" * (len(names) + 1)]
    for field, label in fields:
        values = [median([r for r in reps if r.server == n], field) for n in names]
        rows.append(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {values[1] / values[0]:.2f} |")
    for n in names:
        mine = [r for r in reps if r.server == n]
        low, high = min(r.gen_tps for r in mine), max(r.gen_tps for r in mine)
        plow, phigh = min(r.prompt_tps for r in mine), max(r.prompt_tps for r in mine)
        rows.append(f"\n{n}: gen tok/s {low:.1f}-{high:.1f}, prompt tok/s {plow:.1f}-{phigh:.1f} over {len(mine)} reps")
    return "\n".join(rows)


async def run_reps(servers: dict[str, LocalModelSettings], body: dict[str, Any], reps: int) -> list[Rep]:
    """A B A B ...: each rep starts each server afresh, one after the other."""
    done: list[Rep] = []
    for rep in range(1, reps + 1):
        for name, settings in servers.items():
            result = await one_rep(name, settings, body, rep)
            done.append(result)
            print(table([result]).splitlines()[-1], flush=True)
    return done


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--request", type=Path, required=True)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--size", default="1.5b")
    p.add_argument("--max-tokens", type=int, default=400)
    p.add_argument("--llama-server", type=Path, default=built_server())  # `greenloop model fetch --build-server`
    p.add_argument("--write", type=Path)
    args = p.parse_args()
    body = request_body(args.request, args.max_tokens)
    base: dict[str, Any] = {"size": args.size, "threads": args.threads, "startup_timeout": 600}
    servers = {
        "llama-server (source)": LocalModelSettings(server="llama-server", server_path=str(args.llama_server), **base),
        "xllamacpp (prebuilt)": LocalModelSettings(server="xllamacpp", **base),
    }
    started = time.time()
    reps = asyncio.run(run_reps(servers, body, args.reps))
    same = len({r.reply for r in reps})
    load = Path("/proc/loadavg").read_text().split()[:3]
    text = (f"Servers: llama-server {version_of(args.llama_server)} ({args.llama_server}); xllamacpp "
            f"{xllamacpp_version()}. Model Qwen2.5-Coder-{args.size}-instruct q4_k_m, `-t {args.threads}`, "
            f"`-c 8192 --parallel 1`. {platform.processor() or platform.machine()}, "
            f"{len(reps)} reps in {time.time() - started:.0f} s, load average at the end {' '.join(load)}. "
            f"Distinct replies at temperature 0: {same}.\n\n{table(reps)}\n\n{summary(reps, list(servers))}\n")
    print(text)
    if args.write:
        args.write.write_text(text)


if __name__ == "__main__":
    main()
