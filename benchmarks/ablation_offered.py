"""What each small-edit family offers a task before any test runs: edits of the task's function, and whether
one of them is the reference fix (tree-sitter only: no sandbox, no model).

A family that never turned a cell green may still never have had a chance: its edits did not apply to the
functions the loop tried, or came after the green or the time limit. This counts, per task, the family's
edits among the first `loop.small_edits` (60) of the function the reference fix changes (HumanEvalFix: the
entry point; realbugs: the one def `fix.patch` changes, with the real failure's traceback lines first and
its built-in exceptions, as the loop passes them; a case whose fix spans defs is left out), and which
family's edit is the reference fix itself (the same syntax tree). The loop's order also follows the
coverage pass, which this leaves out, so "among the first 60" is near, not exact.
"""

from __future__ import annotations

import ast
import re
import subprocess
import tarfile
import tempfile
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import realbugs
from ablation_records import family_of
from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.small_edit_candidates import small_edits
from greenloop.agent.repair.splice import Target, code_blocks, definition_node
from greenloop.bench.suites import load_suite
from greenloop.retrieval import parse_frames

LIMIT = 60  # loop.small_edits
_PATCHED = re.compile(r"^\+\+\+ b/(\S+)", re.M)
_HUNK = re.compile(r"^@@ -(\d+)")


@dataclass
class Offer:
    """One task: its function's edits per family (of the first LIMIT), and the family whose edit is the fix."""

    suite: str
    task: str
    edits: dict[str, int] = field(default_factory=dict)
    exact: str = ""  # the family of the edit that is the reference fix ("" when none is)
    note: str = ""  # why the task has no edits counted


def offers(tasks: Iterable[tuple[str, str]], limit: int = LIMIT) -> list[Offer]:
    """The offers of each (suite, task id); a task neither suite file holds is named in its note."""
    wanted = sorted(set(tasks))
    hef = {t.id: t for t in load_suite("humanevalfix").tasks} if any(s == "humanevalfix" for s, _ in wanted) else {}
    ids = {t for s, t in wanted if s == "realbugs"}
    cases = {c.id: c for c in realbugs.load_cases(ids=ids)} if ids else {}
    out = []
    for suite, task in wanted:
        if suite == "humanevalfix" and task in hef:
            extra = hef[task].extra
            path, entry = f"{extra['entry_point']}.py", extra["entry_point"]
            out.append(_offer(suite, task, extra["buggy"], extra.get("fixed") or "",
                              Target(path, entry, "function", 0, 0), limit))
        elif suite == "realbugs" and task in cases:
            out.append(_case_offer(cases[task], limit))
        else:
            out.append(Offer(suite, task, note="not in the suite file"))
    return out


def _offer(suite: str, task: str, source: str, fixed: str, target: Target, limit: int,
           hot: Iterable[int] = ()) -> Offer:
    offer = Offer(suite, task)
    wanted = _definition(fixed, target)
    for reply, kind in small_edits(source, target, limit, list(hot)):
        family = family_of(kind) or f"? {kind}"
        offer.edits[family] = offer.edits.get(family, 0) + 1
        if not offer.exact and wanted is not None and _tree(code_blocks(reply)[0]) == wanted:
            offer.exact = family
    return offer


def _case_offer(case: realbugs.Case, limit: int) -> Offer:
    if len(case.truth) != 1:
        return Offer("realbugs", case.id, note="the fix spans several defs")
    if not (case.folder / "workspace.tar.gz").is_file() or not (case.folder / "fix.patch").is_file():
        return Offer("realbugs", case.id, note="its code is not here (benchmarks/data/realbugs: build.py --missing)")
    truth = case.truth[0]
    patch = (case.folder / "fix.patch").read_text("utf-8", errors="replace")
    with tempfile.TemporaryDirectory(prefix="greenloop-ablation-") as tmp:
        with tarfile.open(case.folder / "workspace.tar.gz") as archive:
            members = [archive.getmember(f"{case.id}/{p}") for p in {truth.path, *_PATCHED.findall(patch)}
                       if f"{case.id}/{p}" in archive.getnames()]
            archive.extractall(tmp, members=members, filter="data")
        root = Path(tmp) / case.id
        buggy = (root / truth.path).read_text("utf-8", errors="replace")
        done = subprocess.run(["patch", "-p1", "-s", "-i", str(case.folder / "fix.patch")], cwd=root,
                              capture_output=True, text=True, check=False)
        fixed = (root / truth.path).read_text("utf-8", errors="replace") if done.returncode == 0 else ""
    name = truth.symbol.rsplit(".", 1)[-1]
    start = _def_line(buggy, name, _first_changed(patch, truth.path)) or truth.start
    target = Target(truth.path, name, "function", start, truth.end)
    hot = {f.line for f in parse_frames(case.output, [truth.path])
           if f.path == truth.path and truth.start <= f.line <= truth.end}
    offer = _offer("realbugs", case.id, buggy, fixed, target, limit, hot)
    offer.note = "" if fixed else "fix.patch does not apply"
    return offer


def _first_changed(patch: str, path: str) -> int:
    """The first line of `path` (1-based, before the fix) that `patch` changes; 0 when it changes none."""
    inside, line = False, 0
    for row in patch.splitlines():
        if row.startswith("+++ "):
            inside = row[4:].strip() in (f"b/{path}", path)
        elif inside and (hunk := _HUNK.match(row)):
            line = int(hunk.group(1))
        elif inside and line and row[:1] in "+-":
            return line
        elif inside and line and row[:1] == " ":
            line += 1
    return 0


def _def_line(source: str, name: str, changed: int) -> int:
    """The line of the last `def name` at or before `changed`: the def the fix is in (the set's lines may be
    off where a file holds several defs of that name)."""
    rows = source.splitlines()[:changed] if changed else []
    return max((i for i, row in enumerate(rows, start=1) if re.match(rf"\s*(?:async\s+)?def {re.escape(name)}\b", row)),
               default=0)


def _definition(source: str, target: Target) -> str | None:
    """The syntax tree (dumped) of the target's definition in `source`; None when it has none."""
    tree = parse(target.path, source) if source else None
    node = (definition_node(tree, target.name, target.start_line or None) or definition_node(tree, target.name)) \
        if tree is not None else None
    if node is None:
        return None
    data = source.encode("utf-8")
    first = data.rfind(b"\n", 0, node.start_byte) + 1
    return _tree(data[first : node.end_byte].decode("utf-8", "replace"))


def _tree(code: str) -> str | None:
    try:
        return ast.dump(ast.parse(textwrap.dedent(code)))
    except SyntaxError:
        return None
