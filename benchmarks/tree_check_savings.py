"""What comparing code by syntax tree saves on recorded runs: model candidates that were tested, and that the
tree check now rejects as the code unchanged or as a change tested already (decision 2026-12-early-echo-stop).

    python benchmarks/tree_check_savings.py --suite humanevalfix BENCH_FOLDER [BENCH_FOLDER ...]

A BENCH_FOLDER holds `.bench/results.jsonl` and `.bench/runs.sqlite3`; nothing there is written (the store is
opened read-only). Each run's candidates are replayed from their recorded diffs: each diff is against the state
its round started from, rebuilt from the case's files (the task's, or the run's offered change's `before`) and
the diffs of the rounds that moved. The check is the round's own (`WorkingCopy.code_fingerprint`): a model
candidate whose fingerprint is the round's start is now "unchanged", one whose fingerprint an earlier candidate
of the run had (a green one aside: the model's own round tests a small edit's green change again) is now a
"repeat" and asked once for another. For each, the seconds from its being asked to its tests' result (replies
came from a memo, so this is the reading and the sandbox run), and whether it was green (it must never be).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sqlite3
import statistics
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.bench.suites import Task, load_suite

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class NotApplied(ValueError):
    """A recorded diff does not apply to the state it is read against."""


@dataclass
class Counts:
    """What the replay found in one bench folder."""

    tested: int = 0  # model candidates tested in the sandbox
    unknown: int = 0  # ... whose state could not be rebuilt (a file not in the case, a diff that does not apply)
    unchanged: list[float] = field(default_factory=list)  # seconds of each now rejected as unchanged
    repeats: list[float] = field(default_factory=list)  # ... as a change tested already
    rejected: list[str] = field(default_factory=list)  # each newly rejected candidate: run, index, verdict, diff
    green_lost: list[str] = field(default_factory=list)  # newly rejected candidates that were green (must be none)
    outcome_differs: list[str] = field(default_factory=list)  # a repeat whose earlier twin's tests said otherwise
    seconds: list[float] = field(default_factory=list)  # of every model candidate tested


def apply_diff(files: dict[str, str], diff: str) -> dict[str, str]:
    """`files` with a unified diff of `candidate_round._diff` applied (each hunk's old lines checked)."""
    out = dict(files)
    for path, hunks in _by_file(diff):
        old = out.get(path, "").splitlines(keepends=True)
        new: list[str] = []
        at = 0
        for start, lines in hunks:
            begin = max(start - 1, 0) if any(line[:1] in " -" for line in lines) else start
            if begin < at:
                raise NotApplied(f"{path}: hunks overlap")
            new.extend(old[at:begin])
            at = begin
            for line in lines:
                sign, text = line[:1], line[1:]
                if sign in " -":
                    if at >= len(old) or old[at].rstrip("\n") != text.rstrip("\n"):
                        raise NotApplied(f"{path}: line {at + 1} is not {text!r}")
                    if sign == " ":
                        new.append(old[at])
                    at += 1
                elif sign == "+":
                    new.append(text)
        new.extend(old[at:])
        out[path] = "".join(new)
    return out


def _by_file(diff: str) -> Iterable[tuple[str, list[tuple[int, list[str]]]]]:
    path, hunks = "", cast(list[tuple[int, list[str]]], [])
    lines = diff.splitlines(keepends=True)
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("--- ") and n + 1 < len(lines) and lines[n + 1].startswith("+++ "):
            if path:
                yield path, hunks
            path, hunks = lines[n + 1][4:].strip().removeprefix("b/"), []
            n += 2
            continue
        if (m := _HUNK.match(line)) is not None:
            hunks.append((int(m[1]), []))
        elif hunks and line[:1] in " -+":
            hunks[-1][1].append(line)
        n += 1
    if path:
        yield path, hunks


def case_file(task: Task | None, path: str) -> str | None:
    """A file of the case as the run found it: a HumanEvalFix task's buggy function, a realbugs case's archive."""
    if task is None:
        return None
    if task.kind == "fix" and path == f"{task.extra.get('entry_point')}.py":
        return str(task.extra["buggy"])
    if task.kind == "realbugs":
        with tarfile.open(Path(str(task.extra["archive"]))) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.split("/", 1)[-1] == path:
                    handle = tar.extractfile(member)
                    return None if handle is None else handle.read().decode("utf-8", "surrogateescape")
    return None


def replay(events: list[dict[str, Any]], task: Task | None, counts: Counts) -> None:
    """One run's candidates, in order, through the tree check (see the module's docstring)."""
    done: dict[str, Any] = next((e for e in reversed(events) if e["kind"] == "done"), {})
    base: dict[str, str] = {f["path"]: f["before"] for f in (done.get("changes") or {}).get("files", [])
                            if f.get("before") is not None}
    for e in events:
        for path, _ in _by_file(e.get("diff") or ""):
            if path not in base and (text := case_file(task, path)) is not None:
                base[path] = text
    root = Path("/nonexistent")
    states = [dict(base)]  # the state each moved round left, newest last
    round_diffs: dict[int, str] = {}  # this round's candidates' diffs, by index
    earlier: dict[int, tuple[bool, str]] = {}  # fingerprints of candidates tested so far -> (green, what they gave)
    asked: dict[tuple[str, int], float] = {}
    for e in events:
        if e["kind"] == "candidate_asked":
            asked[(e["route"], e["index"])] = e["at"]
            continue
        if e["kind"] == "round_ended":
            if e.get("moved") and e.get("best") in round_diffs:
                with contextlib.suppress(NotApplied):  # a moved state not rebuilt: its later diffs say so
                    states.append(_rebuilt(states, round_diffs[e["best"]])[1])
            round_diffs = {}
            continue
        if e["kind"] != "candidate_tested" or e["status"] != "tested":
            continue
        round_diffs[e["index"]] = e.get("diff") or ""
        model = e.get("change_kind") == "model"
        seconds = e["at"] - asked.get((e["route"], e["index"]), e["at"])
        outcome = f"{e.get('passed')}/{e.get('failed')}/{e.get('errors')}"
        counts.tested += model
        try:
            start, after = _rebuilt(states, e.get("diff") or "")
        except NotApplied:
            counts.unknown += model
            continue
        copy = WorkingCopy(root, {p: t.encode() for p, t in base.items()})
        copy.restore({p: t.encode() for p, t in start.items()})
        fork = copy.fork()
        fork.restore({p: t.encode() for p, t in after.items()})
        mine = fork.code_fingerprint()
        if model:
            counts.seconds.append(seconds)
            verdict = ""
            if mine == copy.code_fingerprint():
                counts.unchanged.append(seconds)
                verdict = "unchanged"
            elif mine in earlier and not earlier[mine][0]:
                counts.repeats.append(seconds)
                verdict = "repeat"
                if earlier[mine][1] != outcome:
                    counts.outcome_differs.append(f"{e['run_id']} #{e['index']}: {earlier[mine][1]} then {outcome}")
            if verdict:
                counts.rejected.append(f"{e['run_id']} #{e['index']} {verdict}, {seconds:.2f} s:\n{e.get('diff')}")
            if verdict and e.get("green"):
                counts.green_lost.append(f"{e['run_id']} #{e['index']} ({verdict})")
            if verdict:
                continue
        earlier.setdefault(mine, (bool(e.get("green")), outcome))


def _rebuilt(states: list[dict[str, str]], diff: str) -> tuple[dict[str, str], dict[str, str]]:
    """(the state a diff is against, the state with it applied): the newest state it applies to (a model's own
    round starts from the state before the small edit's round that moved)."""
    for state in reversed(states):
        try:
            return state, apply_diff(state, diff)
        except NotApplied:
            continue
    raise NotApplied("no state it applies to")


def measure(folder: Path, tasks: dict[str, Task]) -> Counts:
    bench = folder / ".bench"
    by_run = {str(r["run_id"]): str(r["task"]) for r in _rows(bench / "results.jsonl") if r.get("run_id")}
    db = sqlite3.connect(f"file:{bench / 'runs.sqlite3'}?mode=ro&immutable=1", uri=True)
    try:
        rows = db.execute("SELECT run_id, data FROM events ORDER BY seq").fetchall()
    finally:
        db.close()
    runs: dict[str, list[dict[str, Any]]] = {}
    for run_id, data in rows:
        runs.setdefault(run_id, []).append(json.loads(data) | {"run_id": run_id})
    counts = Counts()
    for run_id, events in runs.items():
        replay(events, tasks.get(by_run.get(run_id, "")), counts)
    return counts


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(found: dict[str, Counts], listed: bool = False) -> str:
    lines = ["| bench | model candidates tested | not rebuilt | now unchanged | now repeats | sandbox runs saved "
             "| median s asked→tested (saved) | (all tested) | green among them |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, c in found.items():
        saved = c.unchanged + c.repeats
        median = f"{statistics.median(saved):.2f}" if saved else "-"
        lines.append(f"| {name} | {c.tested} | {c.unknown} | {len(c.unchanged)} | {len(c.repeats)} | {len(saved)} "
                     f"| {median} | {statistics.median(c.seconds) if c.seconds else 0:.2f} | {len(c.green_lost)} |")
    for name, c in found.items():
        for item in c.green_lost:
            lines.append(f"- {name}: GREEN CANDIDATE NEWLY REJECTED {item}")
        for item in c.outcome_differs:
            lines.append(f"- {name}: a repeat's tests said otherwise than its earlier twin's: {item}")
    if listed:
        lines += [f"\n{name}: {item}" for name, c in found.items() for item in c.rejected]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--suite", required=True, choices=("realbugs", "humanevalfix"))
    p.add_argument("--suite-file", type=Path)
    p.add_argument("--list", action="store_true", help="each newly rejected candidate with its diff")
    args = p.parse_args(argv)
    tasks = {t.id: t for t in load_suite(args.suite, args.suite_file).tasks}
    text = table({str(folder): measure(folder, tasks) for folder in args.folders}, args.list)
    print(text)
    return text


if __name__ == "__main__":
    main()
