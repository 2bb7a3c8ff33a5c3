"""The removal reruns read against their baseline: per part turned off, the greens, right greens and wrong
greens it adds, and the seconds it costs, cell by cell (a cell not rerun is the baseline's: the part did
not run there, so it changed nothing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ablation_records import CORRECT, Cell


@dataclass
class Gain:
    """What one part adds over the cells rerun without it (the baseline has it; the rerun does not)."""

    config: str  # the rerun's config, e.g. "no-hotter"
    cells: int = 0
    greens: int = 0  # green with it, minus green without
    right: int = 0  # green and right (same / equivalent) with it, minus without
    wrong: int = 0  # green and `differs` with it, minus without
    seconds: float = 0.0  # the cells' seconds with it, minus without
    missing: list[str] = field(default_factory=list)  # rerun cells with no baseline cell
    changed: list[str] = field(default_factory=list)  # "task: baseline -> rerun" where the outcome differs


def _state(cell: Cell) -> str:
    if cell.outcome != "green":
        return cell.outcome
    return "right" if cell.verdict in CORRECT else "wrong" if cell.verdict == "differs" else "green?"


def gains(baseline: Sequence[Cell], reruns: Sequence[Cell], baseline_config: str = "second-look") -> list[Gain]:
    """Per rerun config (in the order first seen), the part's gains against the baseline config's cells."""
    base = {(c.suite, c.task): c for c in baseline if c.config == baseline_config}
    found: dict[str, Gain] = {}
    for cell in reruns:
        gain = found.setdefault(cell.config, Gain(cell.config))
        with_it = base.get((cell.suite, cell.task))
        if with_it is None:
            gain.missing.append(f"{cell.suite} {cell.task}")
            continue
        gain.cells += 1
        gain.greens += (with_it.outcome == "green") - (cell.outcome == "green")
        gain.right += (_state(with_it) == "right") - (_state(cell) == "right")
        gain.wrong += (_state(with_it) == "wrong") - (_state(cell) == "wrong")
        gain.seconds += with_it.seconds - cell.seconds
        if _state(with_it) != _state(cell):
            gain.changed.append(f"{cell.task}: {_state(with_it)} -> {_state(cell)}")
    return list(found.values())


def gains_markdown(found: Sequence[Gain], baseline_config: str) -> str:
    out = [f"| part off (config) | cells rerun | greens gained | right greens gained | wrong greens added | "
           f"seconds it costs | outcomes that changed ({baseline_config} -> without) |\n",
           "|---|---:|---:|---:|---:|---:|---|\n"]
    for g in found:
        changed = "; ".join(g.changed) or "none"
        missing = f" (no baseline cell: {', '.join(g.missing)})" if g.missing else ""
        out.append(f"| {g.config} | {g.cells} | {g.greens} | {g.right} | {g.wrong} | {g.seconds:.0f} | "
                   f"{changed}{missing} |\n")
    out.append("\nA positive *seconds it costs* is time the part adds; a negative one, time it saves. A part whose "
               "*right greens gained* is 0 on the development sets is deleted (docs/decisions/2026-11-ablation.md).\n")
    return "".join(out)
