"""Retrieval benchmark: localization on real bugs and HumanEvalFix, context size, index speed.

    python benchmarks/bench_locate.py [--write docs/benchmarks/retrieval.md] [--suites realbugs,hef,index]

1. realbugs (benchmarks/data/realbugs or $REALBUGS_DATA: real bugs of real multi-module
   projects, real pytest output): top-1/top-3 of `locate` with the set's hit
   rule, next to its README's two baselines (deepest frame, Okapi BM25), all
   computed in this run; per project; the misses with their top 3; context
   recall (a buggy definition shown in the repair context) and its size.
   With `--coverage`, also with the coverage pass (`retrieval.coverage`, the
   `executed` signal) in the same run, and the pass's time
   (realbugs_coverage.py: Docker sandbox, or the host for cases with
   requirements: `--host-python`).
2. HumanEvalFix packed into one repo (164 buggy modules plus tests), real
   pytest output: the same comparison (BM25 the same, realbugs' build.py's,
   over the defs of the 164 modules), plus context size.
3. Index: cold index of ~2,000 real Python files (site-packages) with worker
   processes vs one thread, and a warm update after one file changes.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import statistics
import sysconfig
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import humanevalfix_repo as hef
import realbugs
import realbugs_coverage
from greenloop.retrieval import RepoIndex, count_tokens, locate, pack_code, parse_frames, spec_locations
from greenloop.retrieval import index as index_module
from greenloop.retrieval.model import Definition
from greenloop.tokens import tokenizer_name
from greenloop_sandbox import Spectrum


def hit(path: str, symbol: str, task: hef.Task) -> bool:
    """The buggy function, or a function nested inside it."""
    return path == task.module and symbol.split(".")[0] == task.entry_point


def bm25_documents(files: dict[str, bytes]) -> tuple[list[Any], dict[str, list[str]]]:
    """The BM25 baseline's documents on the packed repo: realbugs' one BM25 (build.py's defs and tokenizer,
    via `realbugs.bm25_documents`) over the defs of src/."""
    return realbugs.bm25_documents({p: data for p, data in files.items() if p.startswith("src/")})


def bm25_ranking(files: dict[str, bytes], failure: str) -> list[tuple[str, str]]:
    """The BM25 baseline on the packed repo for one failure, every def (path, dotted symbol) best first."""
    return realbugs.bm25_rank(bm25_documents(files), failure)


def prepare(root: Path) -> tuple[list[hef.Task], str, float, dict[str, bytes]]:
    """Write the packed repo, run its tests for real; (tasks, pytest output, seconds, files)."""
    tasks = hef.write_repo(root)
    started = time.perf_counter()
    output = hef.run_pytest(root)
    pytest_seconds = time.perf_counter() - started
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.py")}
    return tasks, output, pytest_seconds, files


async def localization(root: Path) -> tuple[list[str], dict[str, float]]:
    tasks, output, pytest_seconds, files = await asyncio.to_thread(prepare, root)
    index = RepoIndex()
    await index.update(files)
    documents = bm25_documents(files)  # parsed once; each failure is one query
    counts = {name: [0, 0] for name in ("locate", "deepest frame", "BM25")}
    budgets = (3000, 1500, 400)
    sizes: dict[str, list[int]] = {name: [] for name in (*(f"context {b}" for b in budgets), "traceback files")}
    shown: Counter[str] = Counter()
    latencies = []
    repo_tokens = sum(count_tokens(d.decode()) for d in files.values())
    sections = [(hef.task_of(text, tasks), text) for _, text in hef.split_failures(output)]
    for task, text in sections:
        assert task is not None
        t0 = time.perf_counter()
        found = await locate(index, text, top_k=8)
        latencies.append(time.perf_counter() - t0)
        record(counts["locate"], [hit(f.path, f.symbol, task) for f in found])
        frames = parse_frames(text, index.paths)
        deepest = index.enclosing(frames[0].path, frames[0].line) if frames else None
        record(counts["deepest frame"], [deepest is not None and hit(deepest.path, deepest.symbol, task)])
        record(counts["BM25"], [hit(path, symbol, task) for path, symbol in realbugs.bm25_rank(documents, text)[:3]])
        for budget in budgets:
            pack = pack_code(index, found, budget_tokens=budget)
            shown[f"context {budget}"] += any(hit(loc.path, loc.symbol, task) for loc in pack.locations)
            sizes[f"context {budget}"].append(pack.tokens)
        named = {f.path for f in frames}
        shown["traceback files"] += task.module in named
        sizes["traceback files"].append(sum(count_tokens(files[p].decode()) for p in named))
    n = len(sections)
    rows = ["| method | top-1 | top-3 |", "| --- | ---: | ---: |"]
    for name, (top1, top3) in counts.items():
        rows.append(f"| {name} | {top1 / n:.1%} | {top3 / n:.1%} |")
    rows += ["", f"{n} failing tasks; pytest run {pytest_seconds:.1f}s; `locate` median "
             f"{statistics.median(latencies) * 1000:.1f} ms per failure.", ""]
    rows += ["| context source | median tokens | buggy function shown in full |", "| --- | ---: | ---: |"]
    for budget in budgets:
        values = sizes[f"context {budget}"]
        rows.append(f"| assembled context, budget {budget} | {statistics.median(values):.0f} | "
                    f"{shown[f'context {budget}'] / n:.1%} |")
    rows.append(f"| whole files named in the traceback | {statistics.median(sizes['traceback files']):.0f} | "
                f"{shown['traceback files'] / n:.1%} |")
    rows.append(f"| whole repo | {repo_tokens} | 100% |")
    return rows, {"top1": counts["locate"][0] / n}


def record(count: list[int], hits: list[bool]) -> None:
    count[0] += bool(hits) and hits[0]
    count[1] += any(hits[:3])


_CONTEXT_BUDGETS = (1500, 3000)


@dataclass
class _CaseResult:
    """One realbugs case: hits per method, greenloop's top 3, context per budget, timings."""

    hits: dict[str, list[bool]]
    top3: list[str]
    shown: dict[int, tuple[bool, bool, int]]  # budget -> (truth shown, shown whole, tokens)
    seconds: tuple[float, float, float]  # index, locate, spec_locations


def baseline_hits(case: realbugs.Case, files: dict[str, bytes], definitions: list[Definition]) -> dict[str, list[bool]]:
    """The set README's two baselines on one case, as hits at their ranks 1 (and 2, 3): the deepest frame over
    greenloop's index, and BM25 as the set's build.py ranks (the ranking baselines.json holds)."""
    deepest = realbugs.deepest_frame(case.output, definitions)
    return {
        "deepest frame": [deepest is not None and realbugs.hits(deepest.path, deepest.symbol, case)],
        "BM25": [realbugs.hits(path, symbol, case) for path, symbol in realbugs.bm25_ranking(files, case.output)[:3]],
    }


async def _run_case(case: realbugs.Case, spectrum: Spectrum | None = None) -> _CaseResult:
    files = await asyncio.to_thread(case.files)
    index = RepoIndex()
    t0 = time.perf_counter()
    await index.update(files)
    t1 = time.perf_counter()
    found = await locate(index, case.output, top_k=10, spectrum=spectrum)
    t2 = time.perf_counter()
    spec = await spec_locations(index, case.output)
    t3 = time.perf_counter()
    hits = {"greenloop": [realbugs.hits(f.path, f.symbol, case) for f in found],
            **baseline_hits(case, files, index.definitions())}
    shown = {}
    for budget in _CONTEXT_BUDGETS:
        pack = pack_code(index, found, budget_tokens=budget, failure_text=False, spec=spec)
        hit = [loc for loc in pack.locations if realbugs.hits(loc.path, loc.symbol, case)]
        shown[budget] = (bool(hit), any(loc not in pack.excerpts for loc in hit), pack.tokens)
    return _CaseResult(hits, [f.symbol for f in found[:3]], shown, (t1 - t0, t2 - t1, t3 - t2))


async def realbugs_suite(
    ids: set[str] | None, runs: dict[str, realbugs_coverage.Run] | None = None
) -> tuple[list[str], dict[str, Any]]:
    """Every realbugs case: its own index, `locate` on the real output, both baselines, the context.

    With `runs` (coverage per case), greenloop's columns use the `executed` signal too.
    """
    cases = realbugs.load_cases(ids=ids)
    runs = runs or {}
    results = [await _run_case(case, runs[case.id].spectrum if case.id in runs else None) for case in cases]
    methods = ("greenloop", "deepest frame", "BM25")
    counts: dict[str, dict[str, list[int]]] = {}  # project -> method -> [top1, top3]
    for case, result in zip(cases, results, strict=True):
        for project in (case.project, "all"):
            for method in methods:
                record(counts.setdefault(project, {m: [0, 0] for m in methods})[method], result.hits[method])
    n = len(cases)
    rows = ["| project | cases | greenloop top-1 | top-3 | deepest frame top-1 | BM25 top-1 | BM25 top-3 |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for project, by_method in sorted(counts.items(), key=lambda item: (item[0] == "all", item[0])):
        size = sum(1 for c in cases if c.project == project) if project != "all" else n
        g, f, b = by_method["greenloop"], by_method["deepest frame"], by_method["BM25"]
        rows.append(f"| {project} | {size} | {_share(g[0], size)} | {_share(g[1], size)} | "
                    f"{_share(f[0], size)} | {_share(b[0], size)} | {_share(b[1], size)} |")
    index_s, locate_s, spec_s = ([r.seconds[i] for r in results] for i in range(3))
    rows += ["", f"Index (cold, per case) median {statistics.median(index_s):.2f} s; `locate` median "
             f"{statistics.median(locate_s) * 1000:.0f} ms (max {max(locate_s) * 1000:.0f} ms); "
             f"`spec_locations` median {statistics.median(spec_s) * 1000:.0f} ms.", ""]
    rows += ["| context budget | median tokens | buggy definition shown (recall) | shown whole |",
             "| ---: | ---: | ---: | ---: |"]
    for budget in _CONTEXT_BUDGETS:
        shown = [r.shown[budget] for r in results]
        rows.append(f"| {budget} | {statistics.median(t for _, _, t in shown):.0f} | "
                    f"{_share(sum(s for s, _, _ in shown), n)} | {_share(sum(w for _, w, _ in shown), n)} |")
    rows += ["", "Misses at top-1 (rank of the first hit in the top 10, and the top 3):", "",
             "| case | truth | rank | greenloop top 3 |", "| --- | --- | ---: | --- |"]
    for case, result in zip(cases, results, strict=True):
        found = result.hits["greenloop"]
        if not (found and found[0]):
            rank = next((str(i + 1) for i, h in enumerate(found) if h), "> 10")
            truth = ", ".join(f"`{t.symbol}`" for t in case.truth)
            rows.append(f"| {case.id} | {truth} | {rank} | {', '.join(f'`{s}`' for s in result.top3)} |")
    all_counts = counts.get("all", {"greenloop": [0, 0]})["greenloop"]
    summary: dict[str, Any] = {"top1": all_counts[0] / max(n, 1), "top3": all_counts[1] / max(n, 1), "cases": n,
               "top1_count": all_counts[0], "top3_count": all_counts[1]}
    for budget in _CONTEXT_BUDGETS:
        summary[f"recall{budget}"] = sum(r.shown[budget][0] for r in results)
        summary[f"tokens{budget}"] = statistics.median(r.shown[budget][2] for r in results) if results else 0
    summary["top1_ids"] = [c.id for c, r in zip(cases, results, strict=True) if r.hits["greenloop"][:1] == [True]]
    return rows, summary


async def coverage_comparison(
    ids: set[str] | None, cache: Path, host_python: str | None
) -> tuple[list[str], dict[str, Any]]:
    """realbugs with and without the coverage pass (`executed` signal), and the pass's time."""
    cases = realbugs.load_cases(ids=ids)
    runs = await realbugs_coverage.spectra(cases, cache, host_python)
    covered = {c.id for c in cases if c.id in runs and runs[c.id].spectrum.failing}
    _, off = await realbugs_suite(ids)
    rows_on, on = await realbugs_suite(ids, runs)
    n = len(cases)
    rows = [f"Coverage pass per case: up to {realbugs_coverage.MAX_TESTS} tests of the failing tests' files for "
            f"up to {realbugs_coverage.SECONDS:g} s, then the failing tests, each test at most "
            f"{realbugs_coverage.CASE_TIMEOUT:g} s. A spectrum with a failing test for {len(covered)}/{n} cases; "
            "time is the whole pass (sandbox start, sync, run, parse).", "",
            "| retrieval.coverage | top-1 | top-3 | recall at 1,500 (median tokens) | recall at 3,000 |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for label, summary in (("off", off), ("on", on)):
        rows.append(f"| {label} | {_share(int(summary['top1_count']), n)} | {_share(int(summary['top3_count']), n)} | "
                    f"{_share(int(summary['recall1500']), n)} ({summary['tokens1500']:.0f}) | "
                    f"{_share(int(summary['recall3000']), n)} |")
    rows.append("")
    gained = sorted(set(on["top1_ids"]) - set(off["top1_ids"]))
    lost = sorted(set(off["top1_ids"]) - set(on["top1_ids"]))
    rows += [f"Top-1 gained with coverage: {', '.join(gained) or 'none'}; lost: {', '.join(lost) or 'none'}.", ""]
    rows += ["| coverage pass ran | cases | median s | max s | median tests run |", "| --- | ---: | ---: | ---: | ---: |"]
    for where in ("docker", "host"):
        chosen = [r for c, r in runs.items() if r.where == where]
        if chosen:
            rows.append(f"| {where} | {len(chosen)} | {statistics.median(r.seconds for r in chosen):.1f} | "
                        f"{max(r.seconds for r in chosen):.1f} | "
                        f"{statistics.median(len(r.spectrum.tests) for r in chosen):.0f} |")
    notes = sorted({r.spectrum.note for r in runs.values() if r.spectrum.note})
    if notes:
        rows += ["", "Notes from the coverage runs: " + "; ".join(notes) + "."]
    rows += ["", "With coverage, the per-project table and misses:", "", *rows_on]
    return rows, on


def _share(count: int, total: int) -> str:
    return f"{count}/{total} ({count / total:.0%})" if total else "-"


def index_corpus(limit: int = 2000) -> dict[str, bytes]:
    """About 2,000 real Python files from the installed packages (seeded sample)."""
    site = Path(sysconfig.get_paths()["purelib"])  # not the user site: it may hold a handful of files
    paths = sorted(p for p in site.rglob("*.py") if p.stat().st_size < 1_000_000)
    chosen = random.Random(7).sample(paths, min(limit, len(paths)))
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(chosen)}


async def indexing(repeats: int) -> list[str]:
    files = await asyncio.to_thread(index_corpus)
    megabytes = sum(map(len, files.values())) / 1e6
    cold: dict[str, list[float]] = {"worker processes (2)": [], "one thread (baseline)": []}
    for _ in range(repeats):
        for label, workers in (("worker processes (2)", 2), ("one thread (baseline)", 1)):
            index_module._cache.clear()
            index = RepoIndex(workers=workers)
            t0 = time.perf_counter()
            await index.update(files)
            cold[label].append(time.perf_counter() - t0)
    warm, unchanged, after = [], [], []
    path = max(files, key=lambda p: len(files[p]) if len(files[p]) < 40_000 else 0)
    for i in range(20):
        snapshot = dict(files)
        t0 = time.perf_counter()
        await index.update(snapshot)
        unchanged.append(time.perf_counter() - t0)
        snapshot[path] = files[path] + f"\n\ndef added_{i}(x):\n    return x + {i}\n".encode()
        t0 = time.perf_counter()
        await index.update(snapshot)
        warm.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await locate(index, f'File "{path}", line 3, in f\n', top_k=5)
        after.append(time.perf_counter() - t0)
    ms = lambda values: f"{statistics.median(values) * 1000:.1f} ms"  # noqa: E731
    rows = [f"Corpus: {len(files)} Python files, {megabytes:.1f} MB (seeded sample of site-packages).", "",
            "| operation | median | ratio |", "| --- | ---: | ---: |"]
    base = statistics.median(cold["one thread (baseline)"])
    for label, values in cold.items():
        rows.append(f"| cold index, {label} | {statistics.median(values):.2f} s | "
                    f"{statistics.median(values) / base:.2f}x |")
    rows.append(f"| warm update, whole snapshot, nothing changed | {ms(unchanged)} | |")
    rows.append(f"| warm update, whole snapshot, one file changed ({len(files[path]) // 1000} KB) | {ms(warm)} | |")
    rows.append(f"| `locate` right after that update (graph rebuilt) | {ms(after)} | |")
    return rows


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", type=Path, help="also write the tables to this markdown file")
    parser.add_argument("--repeats", type=int, default=3, help="cold-index repeats (default 3)")
    parser.add_argument("--suites", default="realbugs,hef,index", help="comma-separated: realbugs, hef, index")
    parser.add_argument("--cases", help="comma-separated realbugs case ids (default: all)")
    parser.add_argument("--coverage", action="store_true",
                        help="realbugs also with the coverage pass (Docker; --host-python for cases with requirements)")
    parser.add_argument("--host-python", help="a python with pytest, pytest-timeout, coverage and the cases' "
                        "requirements, for the cases the offline sandbox cannot install")
    parser.add_argument("--spectra", type=Path, default=Path(tempfile.gettempdir()) / "realbugs-spectra",
                        help="cache of the coverage runs, one JSON per case")
    args = parser.parse_args()
    suites = set(args.suites.split(","))
    parts: list[str] = []
    ok = True
    if "realbugs" in suites:
        if not realbugs.available():
            raise SystemExit(f"{realbugs.DATA} is missing: build it with benchmarks/data/realbugs/build.py or set REALBUGS_DATA")
        rows, summary = await realbugs_suite(set(args.cases.split(",")) if args.cases else None)
        parts += ["## 1. realbugs (real bugs, real pytest output)", "", *rows, ""]
        ok &= summary["top1"] >= 0.85 and summary["top3"] >= 0.95
        if args.coverage:
            ids = set(args.cases.split(",")) if args.cases else None
            rows, _ = await coverage_comparison(ids, args.spectra, args.host_python)
            parts += ["## 1b. realbugs with the coverage pass (`retrieval.coverage`)", "", *rows, ""]
    if "hef" in suites:
        with tempfile.TemporaryDirectory(prefix="bench-locate-") as tmp:
            rows, summary = await localization(Path(tmp))
        parts += ["## 2. HumanEvalFix packed into one repo (164 tasks)", "", *rows, ""]
        ok &= summary["top1"] >= 0.99
    if "index" in suites:
        parts += ["## 3. Index", "", *await indexing(args.repeats), ""]
    header = [f"Machine: {platform.machine()}, {platform.python_version()}, tokens: {tokenizer_name()}.", ""]
    text = "\n".join(parts)
    print("\n".join(header) + "\n" + text)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(DOC_HEAD + "\n".join(header) + "\n" + text)
    return 0 if ok else 1


DOC_HEAD = """# Retrieval benchmarks

Made by `python benchmarks/bench_locate.py --write docs/benchmarks/retrieval.md`;
every baseline is measured in the same run. BM25 is realbugs' build.py's
(the one its baselines.json holds) in both suites; on HumanEvalFix its
documents are the defs of the 164 task modules. realbugs hits follow its README:
same path, one dotted symbol a whole-component suffix of the other. A
HumanEvalFix hit is the task's buggy function (its `entry_point`) or a
function nested inside it.

"""

if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
