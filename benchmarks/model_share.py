"""The model's share (issue 62, item 5): where the oracle goes green and right and the 1.5B model does not, how
each of the model's replies fails there, read from the run records.

    python3 benchmarks/model_share.py --suite realbugs --oracle ORACLE_RESULTS [--suite-file F] \
        [LABEL=]SOURCE... [--markdown FILE]

ORACLE_RESULTS is an oracle bench's results.jsonl (docs/benchmarks/oracle-loss/). A SOURCE is a 1.5B bench
folder (`.bench/results.jsonl`, `.bench/runs.sqlite3`, `report.json`) or a results file alone (a committed
cells file: its outcomes, no replies). A cell is the model's share when its case is green and right with the
oracle (verdict `same`/`equivalent`) and the cell is not. Each model call of such a cell is put in the first
class that fits (`reply_class`):

- request failed: the call got no reply (refused as too long for the context window, an HTTP error): the loop's;
- truth def not shown: the request shows none of the case's truth defs (read with the oracle's own reading,
  `bench.oracle.shown_defs`): the loop's share, not the model's;
- right def, lost by the loop: a def of the reply is a shown truth def as the reference fix has it (syntax trees,
  docstrings aside), yet the cell did not end right;
- cut off: the reply hit its token cap (`finish_reason` length);
- no code: no code block and no def in the reply (prose; the loop asks such a reply again for the code);
- echo: the shown code given back unchanged (the loop said it changes nothing, or its defs' trees are the shown ones);
- repeat: the same defs (syntax trees) as an earlier reply of the run: a change already tried;
- not applied: the loop rejected the candidate (no def of the shown name, does not parse, ...);
- wrong fix: applied, and the tests still failed, or went green with another behaviour than the reference.

Cells right through a small edit are read too (`--rescued`): the model's replies before the edit won are the
model's share the small edits hid. A source without a run store lists its cells with "no record".
"""

from __future__ import annotations

import argparse
import ast
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from greenloop.agent.repair.prompts import prompt_hash
from greenloop.agent.repair.risk import without_docstring
from greenloop.agent.repair.splice import code_blocks, has_code_block
from greenloop.bench.oracle import Request, read_request, shown_defs
from greenloop.bench.oracle_fix import ReferenceFix
from greenloop.bench.oracle_server import reference_of
from greenloop.bench.suites import load_suite
from oracle_loss import RIGHT, truth_of

CLASSES = (
    "request failed (loop)",
    "truth def not shown (loop)",
    "right def, lost by the loop",
    "cut off",
    "no code",
    "echo",
    "repeat",
    "not applied",
    "wrong fix",
)
LOOP = CLASSES[:2]
RIGHT_KEPT = "right def (the cell ended right)"  # in a cell a small edit made right: the reply was not needed
UNCHANGED = "changes nothing"  # the loop's reason for a reply that gives the code back (splice.Unchanged)


@dataclass(frozen=True)
class Reply:
    """One model call of a run: what it was asked, what came back, and how the loop read it (None: re-asked)."""

    messages: list[dict[str, Any]]
    text: str
    finish_reason: str = "stop"
    failed: str = ""  # why the call got no reply ("" when it did)
    step: str = ""
    iteration: int = 0
    status: str = ""  # the candidate's: tested, rejected; "asked again" (the loop asked once more); "" not matched
    reason: str = ""
    green: bool = False


@dataclass(frozen=True)
class Cell:
    source: str
    config: str
    task: str
    outcome: str
    verdict: str
    kind: str
    recorded: bool
    right: bool = False  # right through a small edit (read with --rescued): its replies are the share it hid
    replies: list[tuple[Reply, str, str]] = field(default_factory=list)  # (reply, class, why)


def defs(code: str) -> dict[str, str]:
    """Each function of a piece of python (a file, a def at column 0 or as indented in its class) by its
    qualified name: its syntax tree without docstrings or positions; {} when it does not parse."""
    source = "if 1:\n" + code if code[:1] in (" ", "\t") else code
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = without_docstring(node.body) or [ast.Pass()]
    out: dict[str, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(prefix + child.name, ast.dump(child, include_attributes=False))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.stmt):
                visit(child, prefix)

    visit(tree, "")
    return out


def named(found: dict[str, str], symbol: str) -> str | None:
    """The tree of `symbol` (qualified in its file) among defs read from a fragment: by its whole name, or the
    fragment's name being its tail (a method given back at column 0 is `area`, in its file `Circle.area`)."""
    for name, tree in found.items():
        if symbol == name or symbol.endswith("." + name):
            return tree
    return None


def classify(replies: Iterable[Reply], fix: ReferenceFix, truth: list[str], lost: bool = True
             ) -> list[tuple[Reply, str, str]]:
    """Each reply of one run in order, with its class and why (a repeat is told by the replies before it); in a
    cell that ended right (`lost` False) a right def is RIGHT_KEPT, not lost."""
    earlier: set[str] = set()
    out = []
    for reply in replies:
        name, why = reply_class(reply, fix, truth, earlier)
        out.append((reply, RIGHT_KEPT if name == CLASSES[2] and not lost else name, why))
        if code := reply_code(reply.text):
            earlier.add(json.dumps(code, sort_keys=True))
    return out


def reply_code(text: str) -> dict[str, str]:
    """The defs of a reply's code blocks (the reply itself when it has none), by qualified name: their trees."""
    found: dict[str, str] = {}
    for block in code_blocks(text):
        for name, tree in defs(block).items():
            found.setdefault(name, tree)
    return found


def reply_class(reply: Reply, fix: ReferenceFix, truth: list[str], earlier: set[str] | None = None) -> tuple[str, str]:
    """The class of one model reply in a cell the model lost (CLASSES), and a short why; `earlier` holds the
    code of the run's replies before it (`classify`)."""
    if reply.failed:
        return CLASSES[0], reply.failed[:120]
    shown = [d for d in shown_defs(fix, reply.messages) if d in truth]
    if not shown:
        return CLASSES[1], "shows " + (", ".join(_pieces(reply.messages)) or "no code")
    found = reply_code(reply.text)
    for item in shown:
        path, symbol = item.split("::", 1)
        mine, theirs = named(found, symbol), named(defs(fix.fixed.get(path, "")), symbol)
        if mine is not None and mine == theirs:
            return CLASSES[2], f"`{symbol}` as the reference has it; the candidate: {reply.status or 'asked again'}" + (
                f" ({reply.reason[:80]})" if reply.reason else "")
    if reply.finish_reason == "length":
        return CLASSES[3], f"stopped at its cap with {len(reply.text)} characters"
    if not found and not has_code_block(reply.text):
        return CLASSES[4], " ".join(reply.text.split())[:100]
    given = {}
    for piece in read_request(Request.of(reply.messages).first)[1]:
        given.update(defs(piece.code))
    same = [name for name in found if named(given, name) is not None or name in given]
    if UNCHANGED in reply.reason or (same and all(found[n] == (given.get(n) or named(given, n)) for n in same)):
        return CLASSES[5], reply.reason[:120] or f"{', '.join(same)} as shown"
    if found and json.dumps(found, sort_keys=True) in (earlier or set()):
        return CLASSES[6], reply.reason[:120] or "the defs of an earlier reply"
    if reply.status == "rejected" or not same:
        return CLASSES[7], reply.reason[:120] or f"defines {', '.join(found) or 'nothing that parses'}"
    if reply.green:
        return CLASSES[8], "green on the tests it ran, but not kept (the gates' runs or the verdict)"
    return CLASSES[8], reply.reason[:120] or "applied; the tests still fail"


def _pieces(messages: list[dict[str, Any]]) -> list[str]:
    form, pieces = read_request(Request.of(messages).first)
    return [f"{form} {p.path}" for p in pieces] or [form]


def read_replies(store: Path, run_id: str) -> list[Reply]:
    """Every model call of a run, each matched to the candidate it gave (by round, prompt, seed, temperature);
    a call asked again (a reply of prose) keeps no candidate."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        calls = [json.loads(d) | {"iteration": i} for i, d in
                 db.execute("select iteration, data from calls where run_id = ? order by seq", (run_id,))]
        tested = [json.loads(d) for (d,) in
                  db.execute("select data from events where run_id = ? and kind = 'candidate_tested' order by seq", (run_id,))]
    finally:
        db.close()
    by_key = {_key(e.get("iteration"), e.get("prompt_hash"), e.get("seed"), e.get("temperature")): e for e in tested}
    keys = [_key(c["iteration"], _asked(c.get("messages") or []), c.get("seed"), c.get("temperature")) for c in calls]
    out = []
    for n, (call, key) in enumerate(zip(calls, keys, strict=True)):
        again = key in keys[n + 1:]  # the last call of a candidate is its reply; an earlier one was asked again
        event = {"status": "asked again"} if again else by_key.get(key, {})
        out.append(Reply(
            list(call.get("messages") or []), str(call.get("reply") or ""), str(call.get("finish_reason") or ""),
            str(call.get("error") or "request failed") if call.get("outcome") == "failed" else "",
            str(call.get("step", "")), int(call["iteration"] or 0), str(event.get("status", "")),
            str(event.get("reason", "")), bool(event.get("green"))))
    return out


def _asked(messages: list[dict[str, Any]]) -> str:
    first = next((n for n, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    return prompt_hash(messages[:first]) if messages else ""


def _key(iteration: Any, prompt: Any, seed: Any, temperature: Any) -> tuple[str, str, str, str]:
    return (str(iteration), str(prompt), str(seed), f"{float(temperature or 0):.3f}")


def right(result: dict[str, Any]) -> bool:
    return result.get("outcome") == "green" and str(((result.get("extra") or {}).get("verdict") or {}).get("name")) in RIGHT


def oracle_right(path: Path) -> set[str]:
    return {str(r["task"]) for r in _rows(path) if right(r)}


def cells(suite: str, oracle: set[str], source: Path, label: str, suite_file: Path | None, rescued: bool) -> list[Cell]:
    """The model's share of one source (and, with `rescued`, its cells right through a small edit), classified."""
    results = source if source.is_file() else source / ".bench" / "results.jsonl"
    store = results.parent / "runs.sqlite3"
    latest = {r["key"]: r for r in _rows(results)}
    loaded = load_suite(suite, suite_file)
    tasks = {t.id: t for t in loaded.tasks}
    rows = {str(r.get("id")): r for r in _rows(loaded.source)} if suite == "realbugs" else {}
    out: list[Cell] = []
    for result in latest.values():
        extra = result.get("extra") or {}
        task, kind = str(result.get("task")), str(extra.get("kind", ""))
        if task not in oracle or (right(result) and not (rescued and kind not in ("model", ""))):
            continue
        fix = reference_of(tasks[task]) if task in tasks else None
        recorded = store.is_file() and bool(result.get("run_id")) and fix is not None
        cell = Cell(label, str(result.get("config")), task, str(result.get("outcome")),
                    str((extra.get("verdict") or {}).get("name") or "-"), kind, recorded, right(result))
        if recorded and fix is not None:
            truth = truth_of(tasks[task], fix, rows)
            cell.replies.extend(classify(read_replies(store, str(result["run_id"])), fix, truth, not cell.right))
        out.append(cell)
    return sorted(out, key=lambda c: (c.task, c.config))


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(found: Iterable[Cell], title: str) -> str:
    """Per class: the replies, the cells and their cases; then one row per cell (cells without records apart)."""
    found = list(found)
    recorded = [c for c in found if c.recorded]
    lines = [f"### {title}", "", f"{len(found)} cells, {len(recorded)} with run records; "
             f"{sum(len(c.replies) for c in recorded)} model replies.", ""]
    if recorded:
        lines += ["| class | replies | cells | cases |", "| --- | ---: | ---: | --- |"]
        for name in (*CLASSES[:3], RIGHT_KEPT, *CLASSES[3:]):
            hit = [c for c in recorded if any(k == name for _, k, _ in c.replies)]
            count = sum(1 for c in recorded for _, k, _ in c.replies if k == name)
            if count:
                lines.append(f"| {name} | {count} | {len(hit)} | {', '.join(sorted({c.task for c in hit}))} |")
        echoes = [r for c in recorded for r, k, _ in c.replies if k == "echo"]
        if echoes:
            lines += ["", f"Of the {len(echoes)} echoes, {sum(r.status == 'tested' for r in echoes)} were tested in the "
                          "sandbox as a change (the loop's own check compares text, so a def given back without its "
                          "docstring, or spaced otherwise, is run), "
                          f"{sum(r.status == 'asked again' for r in echoes)} were asked again."]
        lines += ["", "| case | config | outcome | verdict | kept | replies by class | truth def shown |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in recorded:
            counts = Counter(k for _, k, _ in c.replies)
            shown = sum(1 for _, k, _ in c.replies if k not in LOOP)
            if c.replies:
                lines.append(f"| {c.task} | {c.config} | {c.outcome} | {c.verdict} | {c.kind or '-'} | "
                             f"{'; '.join(f'{k} {n}' for k, n in counts.items())} | {shown} of {len(c.replies)} |")
        silent = [f"{c.task} ({c.config})" for c in recorded if not c.replies]
        if silent:
            lines += ["", f"No model call in {len(silent)} cells: {', '.join(silent)}."]
    bare = [c for c in found if not c.recorded]
    if bare:
        lines += [*([""] if recorded else []), f"No run record on this machine ({len(bare)} cells): "
                      + ", ".join(f"{c.task} ({c.outcome}{'' if c.verdict == '-' else ', ' + c.verdict})" for c in bare) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+", help="[LABEL=]bench folder or results file of the 1.5B model")
    parser.add_argument("--suite", required=True, choices=("realbugs", "humanevalfix"))
    parser.add_argument("--oracle", type=Path, required=True, help="the oracle bench's results.jsonl")
    parser.add_argument("--suite-file", type=Path)
    parser.add_argument("--rescued", action="store_true", help="also the cells right through a small edit")
    parser.add_argument("--markdown", type=Path, help="write the tables here (else print them)")
    args = parser.parse_args(argv)
    oracle = oracle_right(args.oracle)
    parts = []
    for spec in args.sources:
        label, _, path = spec.rpartition("=")
        found = cells(args.suite, oracle, Path(path), label or path, args.suite_file, args.rescued)
        parts.append(table([c for c in found if not c.right], f"{args.suite}, the model's share: {label or path}"))
        if args.rescued:
            parts.append(table([c for c in found if c.right],
                               f"{args.suite}, right through a small edit after the model's replies: {label or path}"))
    text = "\n".join(parts)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
