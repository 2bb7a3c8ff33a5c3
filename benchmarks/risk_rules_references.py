"""What the risk rules cost in right fixes: each realbugs case's own fix (the developers' `fix.patch`) judged as a green.

A right fix that a rule labels would be offered as plausible instead of done: that is the rule's cost in right
greens. The workspaces are read as files and patched with `patch -p1` (bench/correctness.patched); no project
code runs. Prints one row per case a rule labels, then the count per rule.

    PYTHONPATH=server:sandbox:. python3 benchmarks/risk_rules_references.py
"""

from __future__ import annotations

import io
import json
import sys
import tarfile
from collections import Counter
from pathlib import Path

from greenloop.agent.repair.overfit_shapes import evidence_of
from greenloop.agent.repair.risk import risk
from greenloop.bench.correctness import patched

DATA = Path(__file__).resolve().parent / "data" / "realbugs"
RULES = {"special-casing": "special-casing", "deletes a branch": "deleted branch", "deletes a `return`": "deleted return",
         "deletes a `raise`": "deleted raise", "anchor": "regex anchor", "widens a character class": "regex class",
         "rewrites": "whole-def rewrite", "returns ": "new return type", "suppresses": "exception suppressed"}


def workspace(case: Path) -> dict[str, str]:
    """The case's buggy files (python and tests) as text."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO((case / "workspace.tar.gz").read_bytes())) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py") and (f := tar.extractfile(member)) is not None:
                out[member.name.split("/", 1)[1]] = f.read().decode("utf-8", "surrogateescape")  # under `<id>/`
    return out


def main() -> int:
    rows = [json.loads(line) for line in (DATA / "cases.jsonl").read_text().splitlines() if line.strip()]
    fired: Counter[str] = Counter()
    judged = 0
    for row in rows:
        case = DATA / "cases" / row["id"]
        if not (case / "fix.patch").is_file():
            continue
        before = workspace(case)
        try:
            after = patched(before, (case / "fix.patch").read_text("utf-8", "surrogateescape"))
        except ValueError as exc:
            print(f"- {row['id']}: {exc}")
            continue
        judged += 1
        changed = {p for p in after if p.endswith(".py") and before.get(p) != after[p] and "test" not in p}
        output = (case / "failing_output.txt").read_text("utf-8", "replace") if (case / "failing_output.txt").is_file() \
            else ""
        facts = evidence_of([(t, output) for t in row["tests"]], before)
        said = risk("model", {p: before.get(p, "") for p in changed}, {p: after[p] for p in changed}, facts)
        hits = {name for key, name in RULES.items() if key in said}
        fired.update(hits)
        if said:
            print(f"- {row['id']}: {said[:300]}")
    print(f"\n{judged} reference fixes judged; labelled by rule (each a right fix that would be plausible, not done):")
    print("\n| rule | reference fixes labelled |\n|---|---:|")
    for name in RULES.values():
        print(f"| {name} | {fired.get(name, 0)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
