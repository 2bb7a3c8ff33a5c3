"""The small-edit families' evidence across every recorded run: the greens each gave, by verdict, where it
was tried, and (with the offers) where it had edits to try and where one of them was the reference fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from ablation_offered import Offer
from ablation_records import FAMILIES, Cell, Row


def evidence(cells: Sequence[Cell], offered: Sequence[Offer] = ()) -> tuple[str, dict[str, object]]:
    """Per family and suite: green cells (distinct tasks) by verdict, the recorded cells it was tried in, and
    with `offered` the tasks it had edits for and those where its edit is the reference fix; then the
    families that never gave a green, or never a correct one."""
    suites = sorted({c.suite or "?" for c in cells} | {o.suite for o in offered})
    rows: dict[str, dict[str, Row]] = {f: {s: Row(f) for s in suites} for f in FAMILIES}
    tasks: dict[str, dict[str, set[str]]] = {f: {s: set() for s in suites} for f in FAMILIES}
    offers: dict[str, dict[str, list[int]]] = {f: {s: [0, 0] for s in suites} for f in FAMILIES}  # [had edits, exact]
    of_suite = {s: [c for c in cells if (c.suite or "?") == s] for s in suites}
    recorded = {s: sum(c.rounds is not None for c in of_suite[s]) for s in suites}
    unkinded = {s: sum(c.outcome == "green" and not c.kind for c in of_suite[s]) for s in suites}
    measured = {s: sum(bool(o.edits) for o in offered if o.suite == s) for s in suites}
    for cell in cells:
        suite = cell.suite or "?"
        if cell.kept_family:
            rows[cell.kept_family][suite].keep(cell.verdict)
            tasks[cell.kept_family][suite].add(cell.task)
        for family in {e.family for r in cell.rounds or [] for e in r.edits}:
            if family in rows:
                rows[family][suite].ran += 1
    for offer in offered:
        for family in offer.edits:
            if family in offers:
                offers[family][offer.suite][0] += 1
        if offer.exact in offers:
            offers[offer.exact][offer.suite][1] += 1
    head = " | ".join(f"{s}: green cells (tasks) | correct/differs/unknown | tried in"
                      + (" | had edits in | its edit is the fix in" if offered else "") for s in suites)
    width = 5 if offered else 3
    out = [f"| family | {head} |\n", "|---|" + "---:|" * width * len(suites) + "\n"]
    for family, per in rows.items():
        cols = []
        for s in suites:
            cols.append(f"{per[s].kept} ({len(tasks[family][s])}) | {per[s].correct}/{per[s].differs}/{per[s].unknown}"
                        f" | {per[s].ran if recorded[s] else '-'}")
            if offered:
                cols.append(f"{offers[family][s][0]} | {offers[family][s][1]}")
        out.append(f"| {family} | {' | '.join(cols)} |\n")
    never = [f for f, per in rows.items() if not any(r.kept for r in per.values())]
    wrong_only = [f for f, per in rows.items()
                  if any(r.kept for r in per.values()) and not any(r.correct for r in per.values())]
    counted = "; ".join(f"{s}: {len(of_suite[s])} cells, {recorded[s]} with run records, {unkinded[s]} green with "
                        f"no recorded kind" + (f", {measured[s]} tasks with edits measured offline" if offered else "")
                        for s in suites)
    out.append(f"\n*tried in*: recorded cells where it had a candidate (- : no run records). {counted}.\n"
               f"\nNever green: {', '.join(never) or 'none'}.\nGreen but never correct: {', '.join(wrong_only) or 'none'}.\n")
    data = {"cells": len(cells), "recorded": recorded, "green_without_kind": unkinded, "never_green": never,
            "green_never_correct": wrong_only,
            "families": {f: {s: {**asdict(r), "tasks": sorted(tasks[f][s]), "had_edits": offers[f][s][0],
                                 "edit_is_the_fix": offers[f][s][1]} for s, r in per.items()}
                         for f, per in rows.items()},
            "offers": [asdict(o) for o in offered]}
    return "".join(out), data
