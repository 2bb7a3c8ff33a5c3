"""Embedded model servers: llama-cpp-python's vs llama.cpp's llama-server, and ways to get N candidates.

    python benchmarks/bench_local_server.py [--sizes 0.5b,1.5b] [--reps 2] [--candidates 8]
        [--write docs/benchmarks/local-server.md]

One repair prompt (~576 tokens: a small program, its failing pytest output,
"reply with the corrected function in a code block") asks for N candidates:
the first at temperature 0, the rest at 0.8, each with its own seed (recorded).
Ways, per model size, all servers started by greenloop's own `LocalModelServer`:

- `llama-cpp-python seq`: today's server, one request after another.
- `llama-server seq`: one slot, one request after another; its prompt cache
  reads the shared prompt once.
- `llama-server 4 slots`: `--parallel 4 -kvu`; the first candidate alone (it
  reads the prompt), then the rest 3 and 4 at a time.
- `llama-server n_cmpl`: the first candidate alone, then one request asking for
  3 then 4 completions (`n_cmpl`): one seed and temperature per request.

Reps run interleaved (rep -> way), each rep's prompt opens with its own nonce so
the first request of every way reads the whole prompt cold. Tokens/s in = prompt
tokens / time to first token of that cold request; tokens/s out = completion
tokens / generation time over all candidates. A candidate is correct when its
code block makes the prompt's tests pass (run in a subprocess).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings

PROGRAM = '''\
def parse_duration(text: str) -> int:
    """Seconds in a duration like "1h 30m", "45s" or "2h5m10s"."""
    units = {"h": 3600, "m": 60, "s": 1}
    total, number = 0, ""
    for char in text.replace(" ", "").lower():
        if char.isdigit():
            number += char
        elif char in units and number:
            total += int(number) * units[char]
        else:
            raise ValueError(f"bad duration {text!r}")
    if number:
        raise ValueError(f"number without a unit in {text!r}")
    return total
'''

CALLER = '''\
from duration import parse_duration


def timeout_seconds(config: dict[str, str], default: int = 30) -> int:
    """The configured timeout in seconds: the "timeout" key as a duration, else the default."""
    value = config.get("timeout")
    if value is None:
        return default
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError("timeout must be positive")
    return seconds
'''

TESTS = '''\
def test_parse_duration():
    assert parse_duration("45s") == 45
    assert parse_duration("1h 30m") == 5400
    assert parse_duration("2h5m10s") == 7510
'''

FAILURE = '''\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0
rootdir: /workspace
collected 1 item

test_duration.py F                                                       [100%]

=================================== FAILURES ===================================
_____________________________ test_parse_duration ______________________________

    def test_parse_duration():
>       assert parse_duration("45s") == 45

test_duration.py:4:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

text = '45s'

    def parse_duration(text: str) -> int:
        ...
        if number:
>           raise ValueError(f"number without a unit in {text!r}")
E           ValueError: number without a unit in '45s'

duration.py:13: ValueError
=========================== short test summary info ============================
FAILED test_duration.py::test_parse_duration - ValueError: number without a unit in '45s'
============================== 1 failed in 0.03s ===============================
'''


def messages(nonce: str) -> list[dict[str, str]]:
    system = (f"Session {nonce}. You are a careful Python developer. You fix bugs with the smallest change "
              "that makes the failing tests pass, and you keep the function's name and signature.")
    user = (f"duration.py:\n```python\n{PROGRAM}```\n\nconfig.py (calls it):\n```python\n{CALLER}```\n\n"
            f"test_duration.py:\n```python\n{TESTS}```\n\n"
            f"pytest output:\n```\n{FAILURE}```\n\nReply with the corrected function `parse_duration` "
            "in one ```python code block, and nothing else.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass
class Candidate:
    seed: int
    temperature: float
    started: float  # seconds since the way started
    finished: float = 0.0
    ttft: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    text: str = ""
    correct: bool = False


@dataclass
class WayRun:
    way: str
    size: str
    rep: int
    candidates: list[Candidate] = field(default_factory=list)

    def time_to(self, n: int) -> float:
        return sorted(c.finished for c in self.candidates)[n - 1]


async def ask(url: str, msgs: list[dict[str, str]], seeds: list[int], temperature: float, max_tokens: int,
              t0: float, n_cmpl: int = 1) -> list[Candidate]:
    """One streamed request (a fresh connection: llama-server closes one after a stream)."""
    body: dict[str, Any] = {"model": "local", "messages": msgs, "temperature": temperature, "seed": seeds[0],
                            "max_tokens": max_tokens, "stream": True, "stream_options": {"include_usage": True}}
    if n_cmpl > 1:
        body["n_cmpl"] = n_cmpl
    # n_cmpl: one seed for the request; its completions differ by the server's sampling state
    out = [Candidate(seeds[0] if n_cmpl > 1 else seed, temperature, time.perf_counter() - t0) for seed in seeds]
    texts = [[] for _ in out]  # type: list[list[str]]
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=1800) as http, \
            http.stream("POST", f"{url}/chat/completions", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text:
                    cand = out[choice.get("index", 0)]
                    if not texts[choice.get("index", 0)]:
                        cand.ttft = time.perf_counter() - started
                    texts[choice.get("index", 0)].append(text)
                    cand.completion_tokens += 1  # one token per chunk; replaced by usage when sent
                if choice.get("finish_reason"):
                    out[choice.get("index", 0)].finished = time.perf_counter() - t0
            if chunk.get("usage") and n_cmpl == 1:
                out[0].prompt_tokens = chunk["usage"]["prompt_tokens"]
                out[0].completion_tokens = chunk["usage"]["completion_tokens"]
    for cand, parts in zip(out, texts, strict=True):
        cand.text = "".join(parts)
        cand.finished = cand.finished or time.perf_counter() - t0
    return out


# -- ways ----------------------------------------------------------------------------------
Way = Callable[[str, list[dict[str, str]], int, int], Awaitable[list[Candidate]]]


def seed_of(i: int) -> int:
    return 1000 + i


def temperature_of(i: int) -> float:
    return 0.0 if i == 0 else 0.8


async def sequential(url: str, msgs: list[dict[str, str]], n: int, max_tokens: int) -> list[Candidate]:
    t0 = time.perf_counter()
    out: list[Candidate] = []
    for i in range(n):
        out += await ask(url, msgs, [seed_of(i)], temperature_of(i), max_tokens, t0)
    return out


async def slots(url: str, msgs: list[dict[str, str]], n: int, max_tokens: int) -> list[Candidate]:
    t0 = time.perf_counter()
    out = await ask(url, msgs, [seed_of(0)], 0.0, max_tokens, t0)
    for batch in (range(1, min(4, n)), range(4, n)):
        replies = await asyncio.gather(*(ask(url, msgs, [seed_of(i)], temperature_of(i), max_tokens, t0)
                                         for i in batch))
        out += [c for reply in replies for c in reply]
    return out


async def n_completions(url: str, msgs: list[dict[str, str]], n: int, max_tokens: int) -> list[Candidate]:
    t0 = time.perf_counter()
    out = await ask(url, msgs, [seed_of(0)], 0.0, max_tokens, t0)
    for batch in (range(1, min(4, n)), range(4, n)):
        if len(batch):
            out += await ask(url, msgs, [seed_of(i) for i in batch], 0.8, max_tokens, t0, n_cmpl=len(batch))
    return out


# -- checking ------------------------------------------------------------------------------
_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.S)


def correct(reply: str) -> bool:
    match = _BLOCK.search(reply)
    if not match:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "check.py"
        script.write_text(f"{match.group(1)}\n{TESTS}\ntest_parse_duration()\n", encoding="utf-8")
        try:
            return subprocess.run([sys.executable, str(script)], capture_output=True, timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False


# -- running -------------------------------------------------------------------------------
SERVERS: dict[str, dict[str, Any]] = {
    "llama-cpp-python": {"server": "llama-cpp-python"},
    "llama-server": {"server": "llama-server"},
    "llama-server 4 slots": {"server": "llama-server", "server_args": ["--parallel", "4", "-kvu"]},
}
WAYS: dict[str, tuple[str, Way]] = {  # way -> (server, how)
    "llama-cpp-python seq": ("llama-cpp-python", sequential),
    "llama-server seq": ("llama-server", sequential),
    "llama-server 4 slots": ("llama-server 4 slots", slots),
    "llama-server n_cmpl": ("llama-server 4 slots", n_completions),
}


async def run_size(size: str, ways: list[str], reps: int, n: int, max_tokens: int,
                   dump: Path | None = None, threads: int | None = None) -> list[WayRun]:
    runs: list[WayRun] = []
    needed = {WAYS[w][0] for w in ways}
    servers: dict[str, LocalModelServer] = {}
    try:
        for name in needed:
            settings = LocalModelSettings(size=size, **SERVERS[name], **({"threads": threads} if threads else {}))
            servers[name] = LocalModelServer(settings, alias="local")
            await servers[name].start()
        for rep in range(reps):
            for way in (ways if rep % 2 == 0 else list(reversed(ways))):
                server, how = WAYS[way]
                msgs = messages(f"{size}-{rep}-{way}")
                started = time.perf_counter()
                cands = await how(servers[server].base_url, msgs, n, max_tokens)
                for cand in cands:
                    cand.correct = await asyncio.to_thread(correct, cand.text)
                runs.append(WayRun(way, size, rep, cands))
                print(f"  {size} rep {rep} {way}: {time.perf_counter() - started:.1f}s, to 4 "
                      f"{runs[-1].time_to(min(4, n)):.1f}s, to {n} {runs[-1].time_to(n):.1f}s, "
                      f"{sum(c.completion_tokens for c in cands)} tokens, "
                      f"{sum(c.correct for c in cands)}/{len(cands)} correct", file=sys.stderr, flush=True)
                if dump:
                    await asyncio.to_thread(dump.write_text, json.dumps([asdict(r) for r in runs], indent=1))
    finally:
        for model_server in servers.values():
            await model_server.stop()
    return runs


def rates(runs: list[WayRun], prompt_tokens: int) -> tuple[float, float]:
    """(prompt tokens/s of the cold first request, completion tokens/s over all candidates), medians.

    llama-cpp-python sends no usage in streams: its prompt is counted as llama-server counted it (same
    GGUF chat template and tokenizer)."""
    ins, outs = [], []
    for run in runs:
        first = run.candidates[0]
        if first.ttft:
            ins.append((first.prompt_tokens or prompt_tokens) / first.ttft)
        gen = sum(c.finished - c.started - c.ttft for c in run.candidates if c.completion_tokens)
        if run.way.endswith("seq") and gen > 0:
            outs.append(sum(c.completion_tokens for c in run.candidates) / gen)
    return (statistics.median(ins) if ins else 0.0, statistics.median(outs) if outs else 0.0)


def table(runs: list[WayRun], n: int) -> str:
    rows = ["| model | way | prompt tok/s | gen tok/s (seq) | time to 4 (s) | time to 8 (s) | candidates/min "
            "| x llama-cpp-python | correct |", "|---|---|---|---|---|---|---|---|---|"]
    for size in dict.fromkeys(r.size for r in runs):
        base = None
        for way in dict.fromkeys(r.way for r in runs if r.size == size):
            mine = [r for r in runs if r.size == size and r.way == way]
            t4 = statistics.median(r.time_to(min(4, n)) for r in mine)
            tn = statistics.median(r.time_to(n) for r in mine)
            per_min = 60 * n / tn
            base = base or (per_min if way.startswith("llama-cpp-python") else None)
            ratio = f"{per_min / base:.2f}" if base else "-"
            tin, tout = rates(mine, max(c.prompt_tokens for r in runs if r.size == size for c in r.candidates))
            ok = sum(c.correct for r in mine for c in r.candidates)
            total = sum(len(r.candidates) for r in mine)
            rows.append(f"| {size} | {way} | {tin:.0f} | {tout:.1f} | {t4:.1f} | {tn:.1f} | {per_min:.2f} "
                        f"| {ratio} | {ok}/{total} |")
    return "\n".join(rows)


def seeds_table(runs: list[WayRun]) -> str:
    rows = ["| model | way | rep | candidate | seed | temperature | tokens | finished (s) | correct |",
            "|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        for i, c in enumerate(run.candidates):
            rows.append(f"| {run.size} | {run.way} | {run.rep} | {i} | {c.seed} | {c.temperature} "
                        f"| {c.completion_tokens} | {c.finished:.1f} | {'yes' if c.correct else 'no'} |")
    return "\n".join(rows)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0.5b,1.5b")
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--threads", type=int, help="-t for every server (default: local_model.threads)")
    parser.add_argument("--write", type=Path, help="also write the tables (Markdown) to this file")
    parser.add_argument("--json", type=Path, help="raw runs as JSON")
    args = parser.parse_args(argv)
    ways = [w.strip() for w in args.ways.split(",") if w.strip()]
    runs: list[WayRun] = []
    for size in args.sizes.split(","):
        runs += await run_size(size.strip(), ways, args.reps, args.candidates, args.max_tokens,
                               args.json and args.json.with_suffix(f'.{size.strip()}.json'), args.threads)
    text = (f"Candidates for one ~576-token repair prompt, {args.candidates} per way, max {args.max_tokens} "
            f"tokens, {args.reps} interleaved reps, medians.\n\n{table(runs, args.candidates)}\n")
    print(text)
    if args.write:
        args.write.write_text(text + "\n<details><summary>Seeds and temperatures per candidate</summary>\n\n"
                              + seeds_table(runs) + "\n\n</details>\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
