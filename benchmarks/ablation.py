"""The ablation table: per rung and per small-edit family, what bench runs say each one did, from their records.

    python benchmarks/ablation.py [SUITE=]FOLDER... [--out DIR]
    python benchmarks/ablation.py [SUITE=]FOLDER... --plan [--plan-out DIR] [--suite-file SUITE=JSONL ...]
    python benchmarks/ablation.py [SUITE=]FOLDER... --rerun [SUITE=]FOLDER... [--baseline-config second-look]
    python benchmarks/ablation.py --evidence SOURCE... [--offered [--offered-suite SUITE=JSONL ...]] [--out DIR]

FOLDER is a `greenloop bench --out` folder (read only; a running bench's finished cells count); its suite
comes from its report.json, else `SUITE=` before it. Per suite and config, each rung and family gets: the
cells it ran in, the cells whose kept (final) change came from it and their verdicts (correct = same +
equivalent, differs, unknown), the cells where it moved the state, the seconds spent in it, the
candidates it tested and how many were green. A kept change is an upper bound on what a part gains; the
removal reruns measure it: `--plan` names the cells to rerun with the part off and writes the configs,
`--rerun` reads the reruns against the baseline (the greens, right and wrong greens a part adds, the
seconds it costs). `--evidence` counts each family's greens in stored reports and folders (SOURCE: a
report .json or a bench folder); `--offered` adds each family's edits of the function the reference fix
changes, and whether one of them is that fix (ablation_offered.py: tree-sitter only).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ablation_evidence import evidence
from ablation_gains import gains, gains_markdown
from ablation_offered import offers
from ablation_plan import write_plan
from ablation_records import FAMILIES, SECOND_LOOK, Cell, Row, read_folder, read_report
from greenloop.agent.repair.ladder import LADDER
from greenloop.bench.suites import SUITES, load_suite

RUNGS: tuple[str, ...] = (*LADDER.names(), SECOND_LOOK)  # settle, the rungs, small edits; the second look


@dataclass
class Table:
    """One suite under one config: its cells and a row per rung and per family."""

    suite: str
    config: str
    cells: int
    green: int
    recorded: int  # cells with a run record (rounds known)
    rungs: list[Row]
    families: list[Row]


def tables(cells: Iterable[Cell]) -> list[Table]:
    """A table per (suite, config), in the order first seen."""
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.suite or "?", cell.config), []).append(cell)
    return [table(suite, config, group) for (suite, config), group in groups.items()]


def table(suite: str, config: str, cells: Sequence[Cell]) -> Table:
    rungs = {name: Row(name) for name in RUNGS}
    families = {name: Row(name) for name in FAMILIES}
    for cell in cells:
        if cell.kept_rung:
            rungs.setdefault(cell.kept_rung, Row(cell.kept_rung)).keep(cell.verdict)
        if cell.kept_family:
            families[cell.kept_family].keep(cell.verdict)
        ran: set[str] = set()
        moved: set[str] = set()
        tried: set[str] = set()
        moved_families: set[str] = set()
        for r in cell.rounds or []:
            row = rungs.setdefault(r.rung, Row(r.rung))
            ran.add(r.rung)
            moved.update([r.rung] if r.moved else [])
            row.seconds += r.seconds
            row.tested += r.tested
            row.green += r.green
            moved_families.update([r.moved_family] if r.moved_family else [])
            for edit in r.edits:
                family = families.setdefault(edit.family, Row(edit.family))
                tried.add(edit.family)
                family.seconds += edit.seconds
                family.tested += edit.tested
                family.green += edit.green
        for name in ran:
            rungs[name].ran += 1
        for name in moved:
            rungs[name].moved += 1
        for name in tried:
            families[name].ran += 1
        for name in moved_families:
            families[name].moved += 1
    return Table(suite, config, len(cells), sum(c.outcome == "green" for c in cells),
                 sum(c.rounds is not None for c in cells), list(rungs.values()), list(families.values()))


HEAD = ("| {what} | ran in | kept green | correct | differs | unknown | moved | seconds | tested | green |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def markdown(found: Sequence[Table], sources: Sequence[str]) -> str:
    """The tables as Markdown; a rung or family that neither ran nor kept a change is left out."""
    out = ["# Ablation table: what each rung and small-edit family did in the recorded runs\n",
           "Sources: " + ", ".join(f"`{s}`" for s in sources) + ".\n",
           "*ran in*: cells with a round (rung) or a candidate (family) of it, of the cells with run records; "
           "*kept green*: cells whose kept change came from it (an upper bound on the greens it gains; "
           "the removal reruns measure the gain), by verdict (correct = same + equivalent; unknown includes "
           "not judged); *moved*: cells where it moved the state (better or green); *seconds*: in its rounds "
           "(a family: from each edit asked to tested); *tested* / *green*: its candidates.\n"]
    for t in found:
        out.append(f"\n## {t.suite} · {t.config}: {t.cells} cells, {t.green} green, {t.recorded} with run records\n\n")
        for what, rows in (("rung", t.rungs), ("small-edit family", t.families)):
            shown = [r for r in rows if r.ran or r.kept]
            if not shown:
                continue
            out.append(HEAD.format(what=what))
            out.extend(f"| {r.name} | {r.ran} | {r.kept} | {r.correct} | {r.differs} | {r.unknown} | {r.moved} | "
                       f"{r.seconds:.0f} | {r.tested} | {r.green} |\n" for r in shown)
            out.append("\n")
        silent = [r.name for r in t.families if not r.ran and not r.kept]
        if t.recorded and silent:
            out.append(f"Families with no candidate in these cells: {', '.join(silent)}.\n")
    return "".join(out)


def as_json(found: Sequence[Table]) -> list[dict[str, object]]:
    return [asdict(t) for t in found]


def read_sources(specs: Sequence[str]) -> list[Cell]:
    """The cells of each source (`[SUITE=]FOLDER` or a report .json), a run read twice kept once (the first)."""
    cells: list[Cell] = []
    seen: set[str] = set()
    for spec in specs:
        suite, path = _source(spec)
        found = read_report(path) if path.is_file() else read_folder(path, suite)
        for cell in found:
            if cell.run_id and cell.run_id in seen:
                continue
            seen.add(cell.run_id)
            cells.append(cell if not suite else _with_suite(cell, suite))
    return cells


def _source(spec: str) -> tuple[str, Path]:
    """`SUITE=PATH` -> (SUITE, PATH); a plain path -> ("", PATH)."""
    suite, _, where = spec.partition("=")
    return (suite, Path(where)) if suite in SUITES and where else ("", Path(spec))


def _inside_a_source(out: Path, specs: Sequence[str]) -> str:
    """The source `out` is in (nothing may be written into a bench's folder); "" when none."""
    for spec in specs:
        where = _source(spec)[1].resolve()
        folder = where.parent if where.is_file() else where
        if out.resolve().is_relative_to(folder):
            return str(folder)
    return ""


def _with_suite(cell: Cell, suite: str) -> Cell:
    cell.suite = cell.suite or suite
    return cell


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("sources", nargs="+", help="[SUITE=]FOLDER (a bench --out folder) or a report .json")
    parser.add_argument("--out", type=Path, help="write ablation.md and ablation.json (evidence.* with --evidence) here")
    parser.add_argument("--plan", action="store_true", help="print the removal reruns and write their configs")
    parser.add_argument("--plan-out", type=Path, default=Path("benchmarks/configs/ablation"),
                        help="where the reruns' configs (and suite files) go (default benchmarks/configs/ablation)")
    parser.add_argument("--base", type=Path, default=Path("benchmarks/configs/second-look.toml"),
                        help="the config the reruns start from (default second-look.toml)")
    parser.add_argument("--suite-file", action="append", default=[], metavar="SUITE=JSONL",
                        help="a suite file the cells came from: the reruns' suite files are cut from it")
    parser.add_argument("--tasks-out", type=Path, help="with --suite-file: write each rerun's suite file here")
    parser.add_argument("--rerun", action="append", default=[], metavar="[SUITE=]FOLDER",
                        help="a removal rerun's bench folder: the parts' gains against the sources' baseline cells")
    parser.add_argument("--baseline-config", default="second-look", help="the sources' config the reruns are read "
                        "against (default second-look)")
    parser.add_argument("--evidence", action="store_true", help="the small-edit families' greens in every source")
    parser.add_argument("--offered", action="store_true",
                        help="with --evidence: each family's edits of the sources' tasks, and which is the fix")
    parser.add_argument("--offered-suite", action="append", default=[], metavar="SUITE=JSONL",
                        help="with --offered: the tasks of this suite file too")
    args = parser.parse_intermixed_args(argv)
    for out in (args.out, args.plan_out if args.plan else None, args.tasks_out):
        if out is not None and (inside := _inside_a_source(out, [*args.sources, *args.rerun])):
            print(f"ablation: {out} is inside the source {inside}; the sources are read only", file=sys.stderr)
            return 2
    try:
        cells = read_sources(args.sources)
        if args.evidence:
            tasks = {(c.suite, c.task) for c in cells} | set(_suite_tasks(args.offered_suite))
            text, data = evidence(cells, offers(tasks) if args.offered else ())
            _write(args.out, "evidence", text, data)
        elif args.rerun:
            found_gains = gains(cells, read_sources(args.rerun), args.baseline_config)
            _write(args.out, "gains", gains_markdown(found_gains, args.baseline_config),
                   [asdict(g) for g in found_gains])
        elif args.plan:
            print(write_plan(cells, args.plan_out, args.base, args.suite_file, args.tasks_out))
        else:
            found = tables(cells)
            _write(args.out, "ablation", markdown(found, args.sources), as_json(found))
    except (OSError, ValueError) as exc:
        print(f"ablation: {exc}", file=sys.stderr)
        return 2
    return 0


def _suite_tasks(specs: Sequence[str]) -> list[tuple[str, str]]:
    """(suite, task id) of every row of each `SUITE=JSONL`."""
    found: list[tuple[str, str]] = []
    for spec in specs:
        suite, _, path = spec.partition("=")
        if suite not in SUITES or not path:
            raise ValueError(f"--offered-suite {spec!r}: give SUITE=JSONL with SUITE one of {', '.join(SUITES)}")
        found.extend((suite, t.id) for t in load_suite(suite, Path(path)).tasks)
    return found


def _write(out: Path | None, stem: str, text: str, data: object) -> None:
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{stem}.md").write_text(text, encoding="utf-8")
        (out / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
