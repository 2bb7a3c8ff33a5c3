"""realbugs: is the developers' fix among the small edits the loop tries first? No tests run, in seconds.

    python benchmarks/realbugs_edits.py [--limit 60] [--ids youtube-dl-17,...] [--write FILE] [--coverage DIR]

For each case whose fix changes one def, the def's small edits (`agent.repair.small_edit_candidates`, with the lines of
the real failing output's traceback in that def as `hot`, as the loop passes them) are compared with the
def after `fix.patch`: an edit whose text is the fixed def's (trailing spaces, blank lines and comment lines aside) is
the developers' fix, found without a model. Tests are not run (a youtube-dl test run takes seconds, a
case's edits minutes), so an edit that passes the tests but differs from the developers' is not
counted: a lower bound of what the edits fix. Cases whose fix spans several defs are out of reach
of one edit and counted as such. `--coverage DIR`: the edits in the loop's coverage order too (each
case's coverage pass, `realbugs_coverage.py`: Docker, cached in DIR as JSON), as the loop orders them
when `retrieval.coverage` is on; the rank in that order is `cov`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import realbugs
import realbugs_coverage
from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.small_edit_candidates import small_edit_replies
from greenloop.agent.repair.splice import Target, code_blocks, definition_node
from greenloop.retrieval import line_scores, parse_frames
from greenloop_sandbox import Spectrum


@dataclass
class Row:
    case: str
    defs: int  # defs the fix changes
    edits: int = 0
    hot: int = 0
    rank: int | None = None  # of the edit that is the developers' fix
    cov: int | None = None  # its rank in the coverage order (--coverage)
    note: str = ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="edits per def (the loop's loop.small_edits)")
    parser.add_argument("--ids", help="comma-separated case ids (default: all)")
    parser.add_argument("--write", type=Path, help="the per-case rows as JSON")
    parser.add_argument("--coverage", type=Path, help="spectra cache folder: rank the edits in the coverage order too")
    args = parser.parse_args(argv)
    ids = set(args.ids.split(",")) if args.ids else None
    cases = realbugs.load_cases(ids=ids)
    spectra = {}
    if args.coverage:
        single = [c for c in cases if len(c.truth) == 1]
        spectra = {k: run.spectrum for k, run in asyncio.run(realbugs_coverage.spectra(single, args.coverage, None)).items()}
    rows = [_case(case, args.limit, spectra.get(case.id)) for case in cases]
    for row in rows:
        if args.coverage and row.defs == 1 and row.case not in spectra:
            row.note = "no coverage pass (realbugs_coverage: its project runs on the host only)"
    for row in rows:
        print(f"{row.case:<16} defs {row.defs}  edits {row.edits:>3}  hot {row.hot}  rank {row.rank}  cov {row.cov}  "
              f"{row.note}")
    one = [r for r in rows if r.defs == 1]
    for label, found in (("", [r for r in one if r.rank is not None]),
                         (" in the coverage order", [r for r in one if r.cov is not None])):
        if label and not args.coverage:
            continue
        ranks = ", ".join(f"{r.case} #{r.rank if not label else r.cov}" for r in found) or "none"
        print(f"cases {len(rows)}, fixed in one def {len(one)}: the developers' fix is among the first {args.limit} "
              f"edits{label} in {len(found)} ({ranks})")
    if args.write:
        args.write.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


def _case(case: realbugs.Case, limit: int, spectrum: Spectrum | None = None) -> Row:
    paths = {t.path for t in case.truth}
    row = Row(case.id, len(case.truth))
    if len(case.truth) != 1:
        row.note = "the fix spans several defs"
        return row
    truth = case.truth[0]
    with tempfile.TemporaryDirectory(prefix="greenloop-rb-edits-") as tmp:
        with tarfile.open(case.folder / "workspace.tar.gz") as archive:
            archive.extractall(tmp, filter="data")
        root = Path(tmp) / case.id
        buggy = {p: (root / p).read_text("utf-8", errors="replace") for p in paths}
        patched = subprocess.run(["patch", "-p1", "-s", "-i", str(case.folder / "fix.patch")], cwd=root,
                                 capture_output=True, text=True)
        if patched.returncode != 0:
            row.note = f"fix.patch does not apply: {patched.stdout[-200:]}"
            return row
        fixed = (root / truth.path).read_text("utf-8", errors="replace")
    name = truth.symbol.rsplit(".", 1)[-1]
    wanted = _definition(fixed, truth.path, name, None)
    if wanted is None:
        row.note = "no such def after the fix"
        return row
    target = Target(truth.path, truth.symbol, "function", truth.start, truth.end)
    hot = {f.line for f in parse_frames(case.output, [truth.path])
           if f.path == truth.path and truth.start <= f.line <= truth.end}
    replies = small_edit_replies(buggy[truth.path], target, limit, hot)
    row.edits, row.hot = len(replies), len(hot)
    row.rank = _rank(replies, wanted)
    if spectrum is not None and spectrum.failing:
        scored = small_edit_replies(buggy[truth.path], target, limit, hot, line_scores(spectrum, truth.path))
        row.cov = _rank(scored, wanted)
    elif spectrum is not None:
        row.note = "no failing test ran under coverage"
    return row


def _rank(replies: list[str], wanted: str) -> int | None:
    return next((rank for rank, reply in enumerate(replies, start=1) if _same(code_blocks(reply)[0], wanted)), None)


def _definition(source: str, path: str, name: str, line: int | None) -> str | None:
    tree = parse(path, source)
    node = definition_node(tree, name, line) if tree is not None else None
    if node is None or node.text is None:
        return None
    data = source.encode("utf-8")
    first = data.rfind(b"\n", 0, node.start_byte) + 1
    return data[first : node.end_byte].decode("utf-8", "replace")


def _same(a: str, b: str) -> bool:
    def norm(text: str) -> list[str]:
        lines = [row.rstrip() for row in text.splitlines() if row.strip() and not row.strip().startswith("#")]
        indent = min((len(row) - len(row.lstrip()) for row in lines), default=0)
        return [row[indent:] for row in lines]
    return norm(a) == norm(b)


if __name__ == "__main__":
    sys.exit(main())
