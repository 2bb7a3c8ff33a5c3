"""The removal reruns of an ablation: per rung or family whose kept change turned a cell green, the cells to run
again with it off, and the config that turns it off.

Which cells: a part changes only a cell it ran in. The ladder is the same given the state, so a rung that
ran may change what comes after it (the next rung sooner, other feedback): every cell it ran in is rerun.
A small-edit family's edits are asked of no model and tell the model nothing when they do not move the
state, so a family changes a cell only where its edit was kept ("kept"), moved the state ("moved"), or
where the small edits' round ran out of its time (`loop.small_edits_seconds`) with none green ("cut": with
the family off, other edits fit). The second look has no rung of its own: `loop.second_look = false` is
first-green.toml, the other config of the same bench.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ablation_records import SECOND_LOOK, Cell
from greenloop.bench.suites import SUITES, row_parser


@dataclass
class Rerun:
    """One part turned off: its config's name and setting, and per suite the cells to rerun (with why)."""

    part: str
    setting: str  # "rungs_off" | "edits_off"
    cells: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # suite -> task -> reasons

    @property
    def name(self) -> str:
        slug = self.part.replace(" ", "-")
        return f"no-{slug}" if self.setting == "rungs_off" else f"no-edits-{slug}"

    def add(self, cell: Cell, reason: str) -> None:
        self.cells.setdefault(cell.suite or "?", {}).setdefault(cell.task, set()).add(reason)


def reruns(cells: Sequence[Cell]) -> list[Rerun]:
    """The reruns, rungs first, each part in the order its first kept green was seen."""
    rungs = {c.kept_rung: Rerun(c.kept_rung, "rungs_off") for c in cells
             if c.kept_rung and c.kept_rung != SECOND_LOOK and not c.kept_rung.startswith("?")}
    families = {c.kept_family: Rerun(c.kept_family, "edits_off") for c in cells if c.kept_family}
    for cell in cells:
        if cell.kept_rung in rungs:
            rungs[cell.kept_rung].add(cell, "kept")
        if cell.kept_family in families:
            families[cell.kept_family].add(cell, "kept")
        for r in cell.rounds or []:
            if r.rung in rungs:
                rungs[r.rung].add(cell, "moved" if r.moved else "ran")
            if r.moved_family in families:
                families[r.moved_family].add(cell, "moved")
            if r.cut:
                for family in {e.family for e in r.edits} & families.keys():
                    families[family].add(cell, "cut")
    return [*rungs.values(), *families.values()]


def config_text(base: Path, rerun: Rerun) -> str:
    """`base`'s settings with the part turned off, as TOML."""
    data: dict[str, Any] = tomllib.loads(base.read_text(encoding="utf-8"))
    loop = data.setdefault("loop", {})
    loop[rerun.setting] = sorted({*loop.get(rerun.setting, []), rerun.part})
    head = (f"# Ablation (issue 40): {base.name} with the {'rung' if rerun.setting == 'rungs_off' else 'small-edit family'} "
            f"{rerun.part!r} off.\n# Written by benchmarks/ablation.py --plan; rerun only the cells it names.\n")
    return head + _toml(data)


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    """A settings dict as TOML: plain values first, then one table per dict (json's strings are TOML's)."""
    plain = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    out = "\n".join(plain) + ("\n" if plain else "")
    for key, value in data.items():
        if isinstance(value, dict):
            out += f"[{prefix}{key}]\n" + _toml(value, f"{prefix}{key}.")
    return out


def cut_suite(sources: Sequence[Path], suite: str, tasks: set[str], dest: Path) -> int:
    """Write the rows of `tasks` from `sources` (suite files) to `dest`; realbugs' case folder linked beside it."""
    rows: list[str] = []
    dest.parent.mkdir(parents=True, exist_ok=True)
    for source in sources:
        parse = row_parser(suite, source)
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.strip() and _task_id(parse, line) in tasks:
                rows.append(line)
        cases = (source.parent / "cases").resolve()
        link = dest.parent / "cases"
        if suite == "realbugs" and cases.is_dir() and not link.is_symlink():
            link.symlink_to(cases, target_is_directory=True)
    dest.write_text("".join(f"{r}\n" for r in rows), encoding="utf-8")
    return len(rows)


def _natural(item: tuple[str, object]) -> list[int | str]:
    """Python/9 before Python/10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", item[0])]


def _task_id(parse: Any, line: str) -> str:
    try:
        return str(parse(json.loads(line)).id)
    except (ValueError, KeyError, TypeError):
        return ""


def write_plan(cells: Sequence[Cell], out: Path, base: Path, suite_files: Sequence[str] = (),
               tasks_out: Path | None = None) -> str:
    """Write each rerun's config into `out` (and with `suite_files`, its suite files into `tasks_out`);
    return the plan as text."""
    files: dict[str, list[Path]] = {}
    for spec in suite_files:
        suite, _, path = spec.partition("=")
        if suite not in SUITES or not path:
            raise ValueError(f"--suite-file {spec!r}: give SUITE=JSONL with SUITE one of {', '.join(SUITES)}")
        files.setdefault(suite, []).append(Path(path))
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"Removal reruns (configs from {base}; reasons: kept, moved, cut, ran: ablation_plan.py):"]
    for rerun in reruns(cells):
        config = out / f"{rerun.name}.toml"
        config.write_text(config_text(base, rerun), encoding="utf-8")
        total = sum(len(t) for t in rerun.cells.values())
        lines.append(f"\n{rerun.name}: loop.{rerun.setting} = [{rerun.part!r}], {total} cell(s); {config}")
        for suite, tasks in sorted(rerun.cells.items()):
            named = ", ".join(f"{t} ({'+'.join(sorted(why))})" for t, why in sorted(tasks.items(), key=_natural))
            lines.append(f"  {suite}: {named}")
            if suite in files and tasks_out is not None:
                dest = tasks_out / suite / f"{rerun.name}.jsonl"
                n = cut_suite(files[suite], suite, set(tasks), dest)
                lines.append(f"    greenloop bench --suite {suite} --suite-file {dest} --config {config} "
                             f"--max-iterations 3 ...  ({n} of {len(tasks)} tasks found)")
    return "\n".join(lines)
