"""Retrieval on mutants: `locate` vs deepest frame and BM25 on one-token mutants of stdlib modules.

    python benchmarks/bench_mutants.py [--seed 0] [--per-module 4] [--modules a,b] [--coverage] [--write FILE]

A generalization check of the ranking tuned on realbugs (mostly youtube-dl). Each module becomes a temp
workspace (`<module>.py`, `tests/test_<module>.py` from Lib/test; `test.support` is the stdlib's). Seeded
functions get one token of their body flipped in place (no other line moves); a mutant is kept only if its
tests then fail (pytest -x, the workspace first on sys.path). Scored on that real output with realbugs' hit rule.
With `--coverage`, each kept mutant is also ranked with the coverage pass (`retrieval.coverage`): the python
template's run_spectrum.py on the host, with realbugs' limits (spectra cached as JSON per mutant). The fix loop
asks the pass for every failing test; here `pytest -x` named one, so the file-mates that fail under the mutant
(and not on the clean copy) count as failing too.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import bisect
import io
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

import realbugs
import realbugs_coverage
from greenloop.retrieval import RepoIndex, locate
from greenloop_sandbox.spectrum import Spectrum, parse_spectrum
from greenloop_sandbox.templates import TEMPLATES_DIR

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Module -> its files in the workspace (the first is the one mutated). None of these is shadowed by a C
# accelerator; the test is always Lib/test/test_<module>.py.
MODULES: dict[str, tuple[str, ...]] = {
    name: (f"{name}.py",) for name in ("textwrap", "shlex", "fnmatch", "colorsys", "fractions", "statistics",
                                       "difflib", "calendar", "string", "ipaddress", "graphlib", "configparser")
} | {"html": ("html/__init__.py", "html/entities.py", "html/parser.py")}
FLIPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "+": "-", "-": "+",
         "and": "or", "or": "and", "True": "False", "False": "True"}
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider")
TIMEOUT = 120.0


@dataclass(frozen=True)
class Site:  # one flippable token of a def's body; begin/end are character offsets into the source
    symbol: str
    line: int
    begin: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class Ranked:  # greenloop's answer for one mutant: the truth's rank in its top 10, its top 3, why its top 1
    rank: int | None
    top3: list[str]
    why: str


@dataclass
class Result:
    module: str
    site: Site
    rank: int | None  # of the first hit in greenloop's top 10, 1-based
    top3: list[str]
    why: str  # of greenloop's top 1
    traced: bool  # a `path:line` of the output is inside the mutated def
    deepest: bool
    bm25: bool
    covered: Ranked | None = None  # with the coverage pass
    spectrum_seconds: float = 0.0


def sites(source: str) -> dict[str, list[Site]]:
    """Flippable tokens per innermost def (dotted symbol, realbugs' convention), outside f-strings."""
    lines = io.StringIO(source).readlines()
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text))

    def at(line: int | None, col: int | None) -> int:  # ast columns are UTF-8 byte offsets
        assert line is not None and col is not None
        return starts[line - 1] + len(lines[line - 1].encode()[:col].decode())

    tokens = [(t.string, starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
              for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.string in FLIPS]
    out: dict[str, list[Site]] = {}

    def add(symbol: str, begin: int, end: int, new: str) -> None:
        line = bisect.bisect_right(starts, begin)
        out.setdefault(symbol, []).append(Site(symbol, line, begin, end, source[begin:end], new))

    def between(symbol: str, a: ast.expr, b: ast.expr, wanted: set[str]) -> None:
        low, high = at(a.end_lineno, a.end_col_offset), at(b.lineno, b.col_offset)
        found = next((t for t in tokens if low <= t[1] and t[2] <= high and t[0] in wanted), None)
        if found:
            add(symbol, found[1], found[2], FLIPS[found[0]])

    def visit(node: ast.AST, scope: tuple[str, ...], symbol: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (*scope, node.name)  # decorators, defaults and bases belong to the enclosing scope
            for statement in node.body:
                visit(statement, inner, ".".join(inner) if not isinstance(node, ast.ClassDef) else None)
            return
        if isinstance(node, ast.JoinedStr):
            return
        if symbol is not None:
            if isinstance(node, ast.Compare):
                for left, right in zip([node.left, *node.comparators], node.comparators, strict=False):
                    between(symbol, left, right, {"<", "<=", ">", ">=", "==", "!="})
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
                between(symbol, node.left, node.right, {"+", "-"})
            elif isinstance(node, ast.BoolOp):
                between(symbol, node.values[0], node.values[1], {"and", "or"})
            elif isinstance(node, ast.Constant) and type(node.value) in (bool, int):
                begin, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
                text = source[begin:end]
                if text in ("True", "False"):
                    add(symbol, begin, end, FLIPS[text])
                elif type(node.value) is int and text.isdigit():
                    add(symbol, begin, end, str(node.value + 1))
        for child in ast.iter_child_nodes(node):
            visit(child, scope, symbol)

    visit(ast.parse(source), (), None)
    return out


def run(workspace: Path, *argv: str) -> tuple[int | None, str]:
    """(exit code or None on timeout, stdout + stderr) of a command in the workspace, first on sys.path."""
    env = {**os.environ, "PYTHONPATH": str(workspace), "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C.UTF-8"}
    with subprocess.Popen(argv, cwd=workspace, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the session this call started (tests may spawn pythons)
            proc.communicate()
            return None, ""
    return proc.returncode, out + err


def prepare(name: str, root: Path) -> tuple[Path, list[str], dict[str, bytes]] | str:
    """The workspace, the tests failing on the clean copy (deselected), its .py files; or why it is dropped."""
    workspace = root / name
    for relative in MODULES[name]:
        (workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STDLIB / relative, workspace / relative)
    (workspace / "tests").mkdir()
    shutil.copyfile(STDLIB / "test" / f"test_{name}.py", workspace / "tests" / f"test_{name}.py")
    env = {**os.environ, "PYTHONPATH": str(workspace)}
    where = subprocess.run([sys.executable, "-c", f"import {name}; print({name}.__file__)"], env=env,
                           capture_output=True, text=True, check=False).stdout.strip()
    if where != str(workspace / MODULES[name][0]):
        return f"imports {where or 'nothing'}, not the workspace copy"
    code, output = run(workspace, *PYTEST, "-rf", "tests")
    if code not in (0, 1):
        return f"clean copy exits {code}"
    files = {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*.py"))}
    return workspace, failures(output), files


def failures(output: str) -> list[str]:
    """The failed test ids of pytest's short summary (a failed subtest names its test)."""
    return list(dict.fromkeys(re.findall(r"^(?:SUB)?FAILED(?:\(.*?\))? (tests/\S+)", output, re.M)))


def flaky(workspace: Path, tests: list[str], runs: int = 20) -> bool:
    """Whether one of these unittest tests fails on the current copy in `runs` repetitions (one process)."""
    names = [".".join([Path(t.split("::")[0]).stem, *t.split("::")[1:]]) for t in tests]
    script = ("import sys, unittest; sys.path.insert(0, 'tests'); load = unittest.defaultTestLoader; "
              f"suite = unittest.TestSuite(load.loadTestsFromNames(sys.argv[1:]) for _ in range({runs})); "
              "sys.exit(not unittest.TextTestRunner(verbosity=0).run(suite).wasSuccessful())")
    return run(workspace, sys.executable, "-c", script, *names)[0] == 1


def trial(workspace: Path, target: Path, source: str, mutated: str, broken: list[str],
          tally: dict[str, int]) -> tuple[str, str]:
    """(outcome, pytest output) of one mutant; the clean source is back in place after."""
    try:
        while True:  # a failed test that fails on the clean copy too (random data) is deselected, and again
            target.write_text(mutated, "utf-8")
            code, output = run(workspace, *PYTEST, "-x", *(f"--deselect={t}" for t in broken), "tests")
            failed = failures(output) if code == 1 else []
            target.write_text(source, "utf-8")
            if not failed or not flaky(workspace, failed):
                break
            broken += failed
            tally["flaky"] += 1
    finally:
        target.write_text(source, "utf-8")
    return ("killed" if failed else "hung" if code is None else "passed" if code == 0 else "other"), output


def coverage_pass(workspace: Path, failed: list[str], cache: Path) -> tuple[Spectrum, float]:
    """(spectrum, seconds) of the failing tests and their file-mates under coverage, on the current copy."""
    if cache.is_file():
        data = json.loads(cache.read_text())
        return Spectrum.model_validate(data["spectrum"]), data["seconds"]
    started = time.perf_counter()
    runner = TEMPLATES_DIR / "python" / "run_spectrum.py"
    _, output = run(workspace, sys.executable, str(runner), *(f"--focus={t}" for t in failed),
                    "--max-tests", str(realbugs_coverage.MAX_TESTS), "--seconds", str(realbugs_coverage.SECONDS),
                    "--", "-p", "no:cacheprovider", f"--timeout={realbugs_coverage.CASE_TIMEOUT:g}",
                    "-o", "timeout_method=signal")
    spectrum, seconds = parse_spectrum(output), time.perf_counter() - started
    if not spectrum.tests and not spectrum.note:
        spectrum.note = output[-300:]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"spectrum": spectrum.model_dump(), "seconds": seconds}))
    return spectrum, seconds


async def evaluate(name: str, files: dict[str, bytes], site: Site, output: str,
                   spectrum: Spectrum | None = None) -> Result:
    index = RepoIndex()
    await index.update(files)
    truth = realbugs.Truth(MODULES[name][0], site.symbol, site.line, site.line)
    case = realbugs.Case(f"{name}:{site.symbol}", name, (), (truth,), Path())

    async def ranked(with_spectrum: Spectrum | None) -> Ranked:
        found = await locate(index, output, top_k=10, spectrum=with_spectrum)
        hits = [realbugs.hits(f.path, f.symbol, case) for f in found]
        return Ranked(next((i + 1 for i, h in enumerate(hits) if h), None), [f.symbol for f in found[:3]],
                      found[0].why if found else "")

    plain = await ranked(None)
    definitions = index.definitions()
    deepest = realbugs.deepest_frame(output, definitions)
    bm25 = realbugs.bm25_ranking(files, output)[:1]
    mine = [d for d in definitions if d.path == truth.path and d.symbol == site.symbol]
    traced = any(d.start_line <= int(line) <= d.end_line for d in mine
                 for line in re.findall(rf"^{re.escape(truth.path)}:(\d+)", output, re.M))
    return Result(name, site, plain.rank, plain.top3, plain.why, traced,
                  deepest is not None and realbugs.hits(deepest.path, deepest.symbol, case),
                  bool(bm25) and realbugs.hits(*bm25[0], case),
                  None if spectrum is None else await ranked(spectrum))


async def mutate_module(name: str, root: Path, seed: int, per_module: int, tally: dict[str, int],
                        dropped: dict[str, str], spectra: Path | None = None) -> list[Result]:
    """Up to `per_module` killed mutants of one module (one function each; at most 4 x that many tries).
    With `spectra` (a cache folder), each is also ranked with its coverage pass."""
    prepared = await asyncio.to_thread(prepare, name, root)
    if isinstance(prepared, str):
        dropped[name] = prepared
        return []
    workspace, broken, files = prepared
    target = workspace / MODULES[name][0]
    source = target.read_text("utf-8")
    rng = random.Random(f"{seed}:{name}")
    symbols = sorted(by_symbol := sites(source))
    rng.shuffle(symbols)
    results: list[Result] = []
    for symbol in symbols[: 4 * per_module]:
        if len(results) >= per_module:
            break
        site = rng.choice(by_symbol[symbol])
        mutated = source[: site.begin] + site.new + source[site.end :]
        ast.parse(mutated)  # a one-token flip keeps the module valid
        outcome, output = await asyncio.to_thread(trial, workspace, target, source, mutated, broken, tally)
        tally[outcome] += 1
        if outcome != "killed":
            continue
        spectrum, seconds = None, 0.0
        if spectra is not None:
            target.write_text(mutated, "utf-8")
            try:
                cache = spectra / f"{seed}-{name}-{site.line}-{site.begin}.json"
                spectrum, seconds = await asyncio.to_thread(coverage_pass, workspace, failures(output), cache)
            finally:
                target.write_text(source, "utf-8")
            for test in spectrum.tests:  # the fix loop asks for every failing test; `pytest -x` named one
                test.focus = test.focus or (test.outcome in ("failed", "error") and test.test_id not in broken)
        result = await evaluate(name, files | {MODULES[name][0]: mutated.encode()}, site, output, spectrum)
        result.spectrum_seconds = seconds
        results.append(result)
    return results


def share(count: int, total: int) -> str:
    return f"{count}/{total} ({count / total:.0%})" if total else "-"


def report(results: list[Result], tally: dict[str, int], dropped: dict[str, str], args: argparse.Namespace,
           seconds: float) -> str:
    rows = ["# Retrieval on stdlib mutants", "", f"Made by `python {' '.join(sys.argv)}` (seed {args.seed}, up to "
            f"{args.per_module} mutants per module; Python {platform.python_version()}; {seconds:.0f} s). Each "
            "stdlib module is a small workspace (`<module>.py`, `tests/test_<module>.py` from Lib/test); one token "
            "of one function body flipped; kept only if `pytest -x` then fails. Measured: rank of the mutated def "
            "in `locate(top_k=10)` on that real output (realbugs' hit rule), and realbugs' two baselines "
            "(deepest non-test frame, BM25 over defs) in the same run.", "",
            f"Mutants tried: {sum(tally.values())}; kept (a test failed) {tally['killed']}, tests passed "
            f"{tally['passed']}, hung {tally['hung']}, other exit {tally['other']}. Reruns after the failed test "
            f"also failed on the clean copy (random data; then deselected): {tally['flaky']}."]
    if dropped:
        rows.append("Modules dropped: " + "; ".join(f"{m} ({why})" for m, why in sorted(dropped.items())) + ".")
    rows += ["", "| module | mutants | greenloop top-1 | greenloop top-3 | deepest frame top-1 | BM25 top-1 |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    groups = {m: [r for r in results if r.module == m] for m in sorted({r.module for r in results})}
    groups |= {"all": results, "all, output names a line of the truth": [r for r in results if r.traced],
               "all, output does not": [r for r in results if not r.traced]}
    for module, chosen in groups.items():
        n = len(chosen)
        rows.append(f"| {module} | {n} | {share(sum(r.rank == 1 for r in chosen), n)} | "
                    f"{share(sum(r.rank is not None and r.rank <= 3 for r in chosen), n)} | "
                    f"{share(sum(r.deepest for r in chosen), n)} | {share(sum(r.bm25 for r in chosen), n)} |")
    rows += coverage_rows(results)
    rows += ["", "Misses at top-1 (truth's rank in the top 10; whether the output names a line of it; greenloop's "
             "top 3 and why its top 1 ranks):", "", "| module | truth | mutation | rank | in traceback | "
             "greenloop top 3 | why (top 1) |", "| --- | --- | --- | ---: | --- | --- | --- |"]
    for r in results:
        if r.rank != 1:
            top = ", ".join(f"`{s}`" for s in r.top3)
            rows.append(f"| {r.module} | `{r.site.symbol}` | line {r.site.line}: `{r.site.old}` -> `{r.site.new}` | "
                        f"{r.rank or '> 10'} | {'yes' if r.traced else 'no'} | {top} | {r.why.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def coverage_rows(results: list[Result]) -> list[str]:
    """greenloop with and without the coverage pass, on the mutants that have one, and the pass's time."""
    chosen = [r for r in results if r.covered is not None]
    if not chosen:
        return []
    rows = ["", "With the coverage pass (`retrieval.coverage`: the failing test and up to "
            f"{realbugs_coverage.MAX_TESTS} tests of its file for up to {realbugs_coverage.SECONDS:g} s, on the host; "
            f"median {statistics.median(r.spectrum_seconds for r in chosen):.1f} s, max "
            f"{max(r.spectrum_seconds for r in chosen):.1f} s per pass):", "",
            "| mutants | n | coverage off top-1 | off top-3 | coverage on top-1 | on top-3 |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    groups = {"all": chosen, "output names a line of the truth": [r for r in chosen if r.traced],
              "output does not": [r for r in chosen if not r.traced]}
    for label, group in groups.items():
        n = len(group)
        on = [r.covered.rank if r.covered else None for r in group]
        rows.append(f"| {label} | {n} | {share(sum(r.rank == 1 for r in group), n)} | "
                    f"{share(sum(r.rank is not None and r.rank <= 3 for r in group), n)} | "
                    f"{share(sum(k == 1 for k in on), n)} | {share(sum(k is not None and k <= 3 for k in on), n)} |")
    gained = [f"`{r.site.symbol}`" for r in chosen if r.rank != 1 and r.covered and r.covered.rank == 1]
    lost = [f"`{r.site.symbol}`" for r in chosen if r.rank == 1 and not (r.covered and r.covered.rank == 1)]
    return [*rows, "", f"Top-1 gained with coverage: {', '.join(gained) or 'none'}; lost: {', '.join(lost) or 'none'}."]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", type=Path, help="also write the tables to this markdown file")
    parser.add_argument("--seed", type=int, default=0, help="RNG seed for the functions and tokens (default 0)")
    parser.add_argument("--per-module", type=int, default=4, help="kept mutants per module, at most (default 4)")
    parser.add_argument("--modules", help=f"comma-separated subset of: {', '.join(MODULES)}")
    parser.add_argument("--coverage", action="store_true", help="also rank each mutant with its coverage pass")
    parser.add_argument("--spectra", type=Path, default=Path(tempfile.gettempdir()) / "mutants-spectra",
                        help="cache of the coverage runs, one JSON per mutant")
    args = parser.parse_args()
    names = args.modules.split(",") if args.modules else list(MODULES)
    started, tally = time.perf_counter(), {"killed": 0, "passed": 0, "hung": 0, "other": 0, "flaky": 0}
    dropped: dict[str, str] = {}
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-mutants-") as tmp:
        for name in names:  # sequential: one pytest at a time
            results += await mutate_module(name, Path(tmp), args.seed, args.per_module, tally, dropped,
                                           args.spectra if args.coverage else None)
            print(f"{name}: {sum(r.module == name for r in results)} mutants", file=sys.stderr, flush=True)
    print(text := report(results, tally, dropped, args, time.perf_counter() - started))
    if args.write:
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
