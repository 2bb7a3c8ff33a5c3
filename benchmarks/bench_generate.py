"""Generation quality: app prompts x repeats with the real model, plain vs small-steps.

    python benchmarks/bench_generate.py                     # 10 prompts x 3 runs x 2 configs (hours on CPU)
    python benchmarks/bench_generate.py --limit 2 --repeat 1   # a short run (minutes)

The embedded model is started once and shared by every run (each run has its own
client, so tokens are counted per run). Prints a table per config: share of runs
that end green (with a Wilson 95% interval), median iterations, tokens and time,
and small-steps' ratios against the plain baseline measured in the same run.
`--out FILE.md` also writes the table (and the per-run rows as JSON beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from greenloop.agent.events import Done, Event
from greenloop.agent.generate import GenerateRequest, generate
from greenloop.errors import GreenloopError
from greenloop.llm import open_llm
from greenloop.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "benchmarks" / "suites" / "generate_prompts.jsonl"
CONFIGS = {"plain": False, "small-steps": True}


@dataclass
class Row:
    config: str
    task: str
    repeat: int
    outcome: str
    iterations: int
    tokens: int
    seconds: float
    files: int


def load_suite(path: Path, limit: int | None) -> list[dict[str, str]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append(
                {
                    "id": str(row["id"]),
                    "prompt": str(row["prompt"]),
                    "template": row.get("template", "python"),
                }
            )
        except (json.JSONDecodeError, KeyError) as exc:
            print(f"skipping {path.name}:{n}: {exc}", file=sys.stderr)
    return rows[:limit] if limit else rows


def run_settings(
    args: argparse.Namespace, base_url: str, small_steps: bool, seed: int, store: Path
) -> Settings:
    return load_settings(
        None,
        {
            "llm": {"base_url": base_url, "seed": seed, **({"model": args.model} if args.model else {})},
            "sandbox": {"backend": args.sandbox},
            "generate": {"small_steps": small_steps},
            "loop": {"max_iterations": args.max_iterations},
            "runs": {"store": str(store)},
        },
    )


async def one_run(task: dict[str, str], config: str, repeat: int, settings: Settings, work: Path) -> Row:
    out = work / f"{config}-{task['id']}-{repeat}"
    started = time.monotonic()
    done: Done | None = None
    try:
        request = GenerateRequest(prompt=task["prompt"], out_dir=out, template=task["template"], force=True)
        async for event in generate(request, settings):
            done = _done(event) or done
    except GreenloopError as exc:
        print(f"  {task['id']}: {exc}", file=sys.stderr)
    seconds = time.monotonic() - started
    if done is None:
        return Row(config, task["id"], repeat, "error", 0, 0, seconds, 0)
    tokens = done.prompt_tokens + done.completion_tokens
    return Row(
        config, task["id"], repeat, done.outcome, done.iterations, tokens, seconds, len(done.changes.files)
    )


def _done(event: Event) -> Done | None:
    return event if isinstance(event, Done) else None


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def table(rows: list[Row]) -> str:
    lines = [
        "| config | runs | green | 95% CI | median iterations | median tokens | median time (s) | time vs plain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base_time = None
    for config in CONFIGS:
        mine = [r for r in rows if r.config == config]
        if not mine:
            continue
        green = sum(r.outcome == "green" for r in mine)
        lo, hi = wilson(green, len(mine))
        med_time = statistics.median(r.seconds for r in mine)
        base_time = base_time or med_time
        lines.append(
            f"| {config} | {len(mine)} | {green / len(mine):.0%} | {lo:.0%}-{hi:.0%} | "
            f"{statistics.median(r.iterations for r in mine):g} | {statistics.median(r.tokens for r in mine):,.0f} | "
            f"{med_time:.1f} | {med_time / base_time:.2f}x |"
        )
    return "\n".join(lines)


async def bench(args: argparse.Namespace) -> list[Row]:
    tasks = load_suite(args.suite, args.limit)
    configs = [c for c in CONFIGS if c in args.configs.split(",")]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="greenloop-bench-generate-") as tmp:
        work = Path(tmp)
        async with open_llm(
            load_settings(None, {"llm": {"base_url": args.base_url} if args.base_url else {}})
        ) as llm:
            for repeat in range(args.repeat):
                for task in tasks:
                    for config in configs:
                        settings = run_settings(
                            args, llm.base_url, CONFIGS[config], 1234 + repeat, work / "runs.db"
                        )
                        row = await one_run(task, config, repeat, settings, work)
                        rows.append(row)
                        print(
                            f"{config:11} {task['id']:14} #{repeat}: {row.outcome:8} it={row.iterations} "
                            f"tokens={row.tokens} {row.seconds:.0f}s",
                            flush=True,
                        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", type=Path, default=SUITE, help="JSONL rows {id, prompt, template}")
    parser.add_argument("--limit", type=int, help="only the first K prompts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per prompt and config")
    parser.add_argument("--configs", default="plain,small-steps", help="comma-separated: plain,small-steps")
    parser.add_argument("--sandbox", default="auto", choices=["auto", "docker", "local"])
    parser.add_argument("--max-iterations", type=int, default=3)
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint instead of the embedded model")
    parser.add_argument("--model", help="model name sent to the endpoint")
    parser.add_argument(
        "--out", type=Path, help="write the table here (Markdown) and the rows as JSON beside it"
    )
    args = parser.parse_args()
    rows = asyncio.run(bench(args))
    text = table(rows)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(f"# Generation benchmark\n\n{text}\n", encoding="utf-8")
        args.out.with_suffix(".json").write_text(
            json.dumps([asdict(r) for r in rows], indent=2), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
