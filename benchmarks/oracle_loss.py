"""The oracle's loss table: every cell of an oracle bench that is not green and right, sorted into the loop's
loss classes (issue 61) from its run record and the case's reference fix.

    python3 benchmarks/oracle_loss.py --suite realbugs OUT_DIR [--suite-file F] [--markdown FILE]

OUT_DIR is a `greenloop bench --model oracle` folder (`.bench/results.jsonl`, `.bench/runs.sqlite3`), read
only. A cell is right when it is green and its verdict is `same` or `equivalent` (bench/correctness.py).
The defs that matter are the case's def-level truth (realbugs' `truth`; HumanEvalFix: the entry point);
which of them each model request showed is read with the oracle's own reading of the request
(`bench.oracle.shown_defs`). A green whose verdict did not finish (`unknown`) is right when its truth defs are
the reference's to the syntax tree (said under the table). The first class that fits, in this order:

- tests could not run: `skipped`, `not_reproduced`, an `error` before the loop ran, `environment` (the step's stop);
- tests rerun under the wrong id: a test run said pytest found no such file or test;
- small edit green first, not the fix: green by a small edit (`kind` not `model`) that is not right;
- green, not the fix: green by a model reply (or a mix) that is not right, every truth def shown;
- buggy def never shown / rounds ran out: no request showed a truth def (the run ended stuck / at its budget);
- shown only part of a multi-def fix: some truth defs shown, never all (also a green, not right, so made);
- reply could not be applied: a candidate of a round asked about a truth def was rejected;
- fix needs lines outside defs: the reference fix changes lines outside its defs in a truth file;
- partial state hid the original code: the state moved before the first request that showed a truth def;
- other (read the record).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from greenloop.agent.events import route_name
from greenloop.agent.repair.risk import normal_tree
from greenloop.agent.repair.rungs.small_edits import SmallEditsForm
from greenloop.bench.oracle import shown_defs
from greenloop.bench.oracle_fix import ReferenceFix, spans
from greenloop.bench.oracle_server import reference_of
from greenloop.bench.suites import Task, load_suite

CLASSES = (
    "tests could not run (environment)",
    "tests rerun under the wrong id",
    "small edit green first, not the fix",
    "green, not the fix (model reply)",
    "buggy def never shown",
    "rounds ran out before the right def was asked",
    "shown only part of a multi-def fix",
    "reply could not be applied",
    "fix needs lines outside defs",
    "partial state hid the original code",
    "other (read the record)",
)
RIGHT = ("same", "equivalent")
_ECHO = re.compile(r"changes? nothing|changes none of the definitions")  # the reply gave the code back
_WRONG_ID = re.compile(r"file or directory not found|found no collectors|no tests ran|not found: ")


@dataclass
class Record:
    """What the run store kept of one run: its events and its model requests' messages."""

    events: list[dict[str, Any]] = field(default_factory=list)
    requests: list[list[dict[str, Any]]] = field(default_factory=list)


@dataclass(frozen=True)
class Loss:
    task: str
    outcome: str
    verdict: str
    loss: str  # one of CLASSES ("" for a cell that is green and right)
    why: str
    seconds: float = 0.0  # the cell's wall time (the bench's: setup and judging left out)


def read_records(store: Path, run_ids: Iterable[str]) -> dict[str, Record]:
    wanted = [r for r in run_ids if r]
    out = {r: Record() for r in wanted}
    if not store.is_file() or not wanted:
        return out
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(wanted))
        for run_id, data in db.execute(f"select run_id, data from events where run_id in ({marks}) order by seq", wanted):
            out[run_id].events.append(json.loads(data))
        for run_id, data in db.execute(f"select run_id, data from calls where run_id in ({marks}) order by seq", wanted):
            out[run_id].requests.append(list(json.loads(data).get("messages") or []))
    finally:
        db.close()
    return out


def truth_of(task: Task, fix: ReferenceFix | None, rows: dict[str, dict[str, Any]]) -> list[str]:
    """`path::symbol` of the defs that must change: realbugs' def-level truth, else the fix's own defs."""
    row = rows.get(task.id) or {}
    truth = [f"{t['path']}::{t['symbol']}" for t in row.get("truth") or [] if isinstance(t, dict)]
    if truth:
        return truth
    return [f"{d.path}::{d.symbol}" for d in fix.defs] if fix is not None else []


def classify(result: dict[str, Any], record: Record, fix: ReferenceFix | None, truth: list[str]) -> Loss:
    """The loss class of one bench cell (`loss` "" when it is green and right)."""
    extra = result.get("extra") or {}
    outcome, verdict = str(result.get("outcome")), str((extra.get("verdict") or {}).get("name", ""))

    def loss(name: str, why: str) -> Loss:
        return Loss(str(result.get("task")), outcome, verdict, name, why, float(result.get("seconds") or 0.0))

    if outcome == "green" and verdict in RIGHT:
        return loss("", "")
    if outcome == "green" and verdict in ("unknown", "") and fix is not None and _same_defs(record, fix, truth):
        why = str((extra.get("verdict") or {}).get("reason", ""))[:100]
        return loss("", f"the truth defs are the reference's; the bench's verdict: unknown ({why})")
    if outcome in ("skipped", "not_reproduced") or (outcome == "error" and not record.events):
        return loss(CLASSES[0], str(result.get("error", ""))[:160])
    if outcome == "environment":  # the environment step stopped the run before any round: its own diagnosis
        stop = next((e for e in record.events if e.get("kind") == "done"), {})
        return loss(CLASSES[0], str(stop.get("summary", ""))[:160])
    runs = [e for e in record.events if e.get("kind") in ("tests_ran", "candidate_tested")]
    texts = [json.dumps(e.get("failures", [])) + str(e.get("reason", "")) for e in runs]
    if any(_WRONG_ID.search(t) for t in texts):
        return loss(CLASSES[1], next(m.group(0) for t in texts if (m := _WRONG_ID.search(t))))
    seen = {d for messages in record.requests for d in (shown_defs(fix, messages) if fix is not None else [])
            if d in truth}
    if outcome == "green":
        kind = str(extra.get("kind", ""))
        if kind not in ("model", ""):
            return loss(CLASSES[2], f"kind {kind}, verdict {verdict or '-'}")
        if len(seen) < len(set(truth)):  # green on its tests with part of the fix: the rest was never asked
            return loss(CLASSES[6], f"green with {len(seen)} of {len(set(truth))} truth defs shown, verdict {verdict or '-'}")
        return loss(CLASSES[3], f"kind {kind}, verdict {verdict or '-'}")
    done: dict[str, Any] = next((e for e in reversed(record.events) if e.get("kind") == "done"), {})
    if not seen:
        ended = str(done.get("outcome", outcome))
        return loss(CLASSES[5] if ended == "budget" else CLASSES[4], f"ended {ended}: {str(done.get('evidence', ''))[:120]}")
    if len(seen) < len(set(truth)):
        return loss(CLASSES[6], f"shown {len(seen)} of {len(set(truth))}: {', '.join(sorted(seen))}")
    rejected = [e for e in record.events if e.get("kind") == "candidate_tested" and e.get("status") == "rejected"
                and route_name(str(e.get("route") or "")) != SmallEditsForm.route and _about(str(e.get("target", "")), truth)
                and not str(e.get("reason", "")).startswith("the same change as")  # a repeat is no failure to apply
                and not _ECHO.search(str(e.get("reason", "")))]  # nor the oracle's echo of a def it was not shown
    if rejected:
        return loss(CLASSES[7], str(rejected[0].get("reason", ""))[:160])
    paths = {d.split("::", 1)[0] for d in truth}
    if fix is not None and any(c.path in paths for c in fix.outside):
        return loss(CLASSES[8], f"{sum(c.path in paths for c in fix.outside)} change(s) outside defs in {', '.join(sorted(paths))}")
    moved = [e for e in record.events if e.get("kind") == "round_ended" and e.get("moved")]
    if moved:
        return loss(CLASSES[9], f"the state moved ({moved[0].get('approach', '')}) before or while the defs were asked")
    return loss(CLASSES[10], f"ended {done.get('outcome', outcome)}: {str(done.get('evidence', ''))[:120]}")


def _same_defs(record: Record, fix: ReferenceFix, truth: list[str]) -> bool:
    """Whether the kept change leaves every truth def as the reference fix has it (syntax trees, docstrings aside)."""
    done: dict[str, Any] = next((e for e in reversed(record.events) if e.get("kind") == "done"), {})
    after = {str(f.get("path")): f.get("after") for f in (done.get("changes") or {}).get("files") or []}
    for item in truth:
        path, symbol = item.split("::", 1)
        text, reference = after.get(path), fix.fixed.get(path)
        if not isinstance(text, str) or reference is None or _def_tree(text, symbol) != _def_tree(reference, symbol) \
                or _def_tree(text, symbol) is None:
            return False
    return True


def _def_tree(source: str, symbol: str) -> str | None:
    span = next((s for s in spans(source) if s.symbol == symbol), None)
    if span is None:
        return None
    rows = source.split("\n")[span.start - 1 : span.end]
    lead = rows[0][: len(rows[0]) - len(rows[0].lstrip())]
    return normal_tree("\n".join(row[len(lead):] if row.startswith(lead) else row for row in rows))


def _about(target: str, truth: list[str]) -> bool:
    """Whether a round's target label (a def `in` a path, or a file) is one of the truth defs or files."""
    for d in truth:
        path, symbol = d.split("::", 1)
        if f"`{symbol}` in {path}" in target or target.endswith(f" {path}"):
            return True
    return False


def losses(suite: str, out_dir: Path, suite_file: Path | None = None) -> list[Loss]:
    """Every cell of the bench folder, classified."""
    state = out_dir / ".bench"
    results = [json.loads(line) for line in (state / "results.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    latest = {r["key"]: r for r in results}  # a retried cell's last result
    loaded = load_suite(suite, suite_file)
    tasks = {t.id: t for t in loaded.tasks}
    rows: dict[str, dict[str, Any]] = {}
    if suite == "realbugs":
        for line in loaded.source.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[str(row.get("id"))] = row
    records = read_records(state / "runs.sqlite3", [r.get("run_id", "") for r in latest.values()])
    out: list[Loss] = []
    for result in latest.values():
        task = tasks.get(str(result.get("task")))
        fix = reference_of(task) if task is not None else None
        truth = truth_of(task, fix, rows) if task is not None else []
        out.append(classify(result, records.get(str(result.get("run_id", ""))) or Record(), fix, truth))
    return sorted(out, key=lambda loss: loss.task)


def table(found: list[Loss], title: str) -> str:
    """The loss table in Markdown: counts per class with the case ids, then one row per lost cell."""
    right = sum(1 for f in found if not f.loss)
    green = sum(1 for f in found if f.outcome == "green")
    ran = [f.seconds for f in found if f.outcome not in ("skipped", "not_reproduced")]
    median = statistics.median(ran) if ran else 0.0
    lines = [f"### {title}", "", f"{len(found)} cells: {green} green, **{right} green and right**, "
             f"{len(found) - right} lost; median {median:.0f} s per cell that ran.", "", "| class | cells | cases |", "| --- | ---: | --- |"]
    for name in CLASSES:
        ids = [f.task for f in found if f.loss == name]
        if ids:
            lines.append(f"| {name} | {len(ids)} | {', '.join(ids)} |")
    judged = [f.task for f in found if not f.loss and f.why]
    if judged:
        lines += ["", f"Counted right by their truth defs (the reference's, to the syntax tree) where the bench's verdict "
                      f"did not finish: {', '.join(judged)}."]
    lines += ["", "| case | outcome | verdict | class | evidence |", "| --- | --- | --- | --- | --- |"]
    for f in found:
        if f.loss:
            why = f.why.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f.task} | {f.outcome} | {f.verdict or '-'} | {f.loss} | {why} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--suite", required=True, choices=("realbugs", "humanevalfix"))
    parser.add_argument("--suite-file", type=Path)
    parser.add_argument("--title", default="")
    parser.add_argument("--markdown", type=Path, help="write the table here (else print it)")
    args = parser.parse_args(argv)
    text = table(losses(args.suite, args.out_dir, args.suite_file), args.title or f"{args.suite}: {args.out_dir.name}")
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
