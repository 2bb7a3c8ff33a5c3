"""LLM layer benchmark: client overhead vs a bare `openai` call, and repair success on malformed replies.

    python benchmarks/bench_llm.py [--calls 300] [--per-kind 40] [--seed 7]

Both parts run against the scripted OpenAI-compatible server on 127.0.0.1
(tests/support/scripted_llm.py), so they measure greenloop's own work:

1. Overhead: the same request sent by a bare `AsyncOpenAI` client and by
   `LLMClient` (records, retry bookkeeping, step header), interleaved; medians
   and the difference (target < 2 ms per call).
2. Repair: >= 200 generated malformed replies (truncation, trailing commas,
   prose around JSON, fences, Python literals, wrong types, missing fields).
   The baseline is a strict `json.loads` + validation of the first reply. The
   scripted "model" answers a repair request correctly only when greenloop's
   repair message names the actual problem (the missing/wrong field, or that
   the JSON was cut off); otherwise it repeats its mistake.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.scripted_llm import ScriptedLLM

from greenloop.llm import CallRecord, StructuredOutputError, open_llm
from greenloop.settings import Settings


class Action(BaseModel):
    kind: str
    path: str
    search: str
    replace: str


class Plan(BaseModel):
    diagnosis: str
    confidence: float
    actions: list[Action]


# -- corpus ------------------------------------------------------------------------
def make_plan(rng: random.Random) -> dict[str, Any]:
    words = ["index", "loop", "bound", "null", "cache", "parser", "off-by-one", "rounding", "import"]
    actions = [
        {"kind": "edit", "path": f"pkg/mod{rng.randint(1, 9)}.py",
         "search": f"return x {rng.choice('+-*')} {rng.randint(0, 9)}",
         "replace": f"return x {rng.choice('+-*')} {rng.randint(0, 9)}"}
        for _ in range(rng.randint(1, 3))
    ]
    return {"diagnosis": " ".join(rng.choices(words, k=rng.randint(4, 12))),
            "confidence": round(rng.random(), 2), "actions": actions}


def malform(kind: str, plan: dict[str, Any], rng: random.Random) -> tuple[str, str]:
    """(bad reply, what a useful repair message must mention)."""
    text = json.dumps(plan, indent=rng.choice([None, 2]))
    if kind == "truncated":
        return text[: int(len(text) * rng.uniform(0.3, 0.9))], "cut off"
    if kind == "trailing_commas":
        return text.replace("}", ",}").replace("]", ",]").replace("{,}", "{}"), "JSON"
    if kind == "prose_around":
        return f"Sure! Here is the plan you asked for:\n{text}\nLet me know if you need anything else.", "JSON"
    if kind == "fenced":
        return f"```json\n{text}\n```", "JSON"
    if kind == "python_literal":
        return repr(plan), "JSON"
    if kind == "wrong_types":
        broken = dict(plan)
        field = rng.choice(["confidence", "actions", "diagnosis"])
        broken[field] = {"confidence": "very high", "actions": "edit the file", "diagnosis": ["a", "b"]}[field]
        return json.dumps(broken), field
    if kind == "missing_fields":
        broken = dict(plan)
        field = rng.choice(["diagnosis", "confidence", "actions"])
        del broken[field]
        return json.dumps(broken), field
    raise ValueError(kind)


KINDS = ["truncated", "trailing_commas", "prose_around", "fenced", "python_literal", "wrong_types",
         "missing_fields"]


def strict_ok(text: str) -> bool:
    try:
        Plan.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError):
        return False
    return True


def repair_oracle(good: str, bad: str, must_mention: str) -> Callable[[dict[str, Any]], str]:
    def answer(request: dict[str, Any]) -> str:
        messages = request["messages"]
        if messages[-1]["role"] != "user" or len(messages) < 3:
            return bad  # the first answer: the malformed one
        return good if must_mention in messages[-1]["content"] else bad

    return answer


async def bench_repair(server: ScriptedLLM, settings: Settings, per_kind: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    rows = []
    totals = [0, 0, 0, 0, 0]
    for kind in KINDS:
        n = strict = local = fixed = extra = 0
        for _ in range(per_kind):
            plan = make_plan(rng)
            bad, mention = malform(kind, plan, rng)
            server.reset()
            server.oracle(repair_oracle(json.dumps(plan), bad, mention))
            records: list[CallRecord] = []
            async with open_llm(settings, sink=records.append) as llm:
                try:
                    result = await llm.structured([{"role": "user", "content": "plan"}], Plan, step="plan")
                    ok = result == Plan.model_validate(plan)
                except StructuredOutputError:
                    ok = False
            n += 1
            strict += strict_ok(bad)
            local += len(records) == 1 and ok
            fixed += ok
            extra += len(records) - 1
        totals = [t + v for t, v in zip(totals, [n, strict, local, fixed, extra], strict=True)]
        rows.append(_repair_row(kind, n, strict, local, fixed, extra))
    rows.append(_repair_row("all", *totals))
    return rows


def _repair_row(kind: str, n: int, strict: int, local: int, fixed: int, extra: int) -> list[str]:
    return [kind, str(n), f"{100 * strict / n:.0f}%", f"{100 * local / n:.0f}%", f"{100 * fixed / n:.0f}%",
            f"{extra / n:.2f}"]


# -- overhead ----------------------------------------------------------------------
async def bench_overhead(server: ScriptedLLM, settings: Settings, calls: int) -> list[list[str]]:
    server.reset()
    good = json.dumps(make_plan(random.Random(1)))
    server.script(good)
    system, user = "You fix code.", "x" * 2000
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    # the same messages as openai's typed request params (greenloop's client takes plain dicts)
    bare_messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system},
                                                       {"role": "user", "content": user}]
    bare = AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    rows = []
    async with open_llm(settings) as llm:
        kinds: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
            "complete": (
                lambda: bare.chat.completions.create(model="scripted", messages=bare_messages,
                                                     temperature=0.2, max_tokens=2048, seed=1234),
                lambda: llm.complete(messages, step="bench")),
            "structured": (
                lambda: bare.chat.completions.create(
                    model="scripted", messages=bare_messages, temperature=0.2, max_tokens=2048,
                    seed=1234, response_format={"type": "json_schema", "json_schema": {
                        "name": "plan", "schema": Plan.model_json_schema(), "strict": False}}),
                lambda: llm.structured(messages, Plan, step="plan")),
        }
        for name, (bare_call, our_call) in kinds.items():
            for _ in range(20):  # warm-up: connections, tokenizer, imports
                await bare_call()
                await our_call()
            bare_times: list[float] = []
            our_times: list[float] = []
            for _ in range(calls):
                for fn, sink in ((bare_call, bare_times), (our_call, our_times)):
                    started = time.perf_counter()
                    await fn()
                    sink.append(time.perf_counter() - started)
            b, o = statistics.median(bare_times) * 1000, statistics.median(our_times) * 1000
            rows.append([name, str(calls), f"{b:.2f}", f"{o:.2f}", f"{o - b:+.2f}", f"{o / b:.2f}x"])
    await bare.close()
    return rows


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))  # noqa: E731
    return "\n".join([title, line(header), "  ".join("-" * w for w in widths), *map(line, rows)])


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300, help="timed calls per client and kind")
    parser.add_argument("--per-kind", type=int, default=40, help="malformed replies per kind (7 kinds)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    with ScriptedLLM() as server:
        settings = Settings(llm={"base_url": server.base_url, "api_key": "k", "model": "scripted",
                                 "backoff": 0.01}, local_model={"enabled": False})
        overhead = await bench_overhead(server, settings, args.calls)
        repair = await bench_repair(server, settings, args.per_kind, args.seed)
    print(table("Client overhead per call (scripted server on 127.0.0.1; medians, ms)",
                ["call", "n", "bare openai", "greenloop", "overhead", "ratio"], overhead))
    print()
    print(table("Structured output on malformed replies (repair_attempts=2)",
                ["kind", "n", "strict parse (baseline)", "valid, no extra call", "valid in budget", "extra calls"],
                repair))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
