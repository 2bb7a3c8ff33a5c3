"""The whole-file form: a file written again, the reply's code block for it replacing it (code_reply.py).

Asked by the rungs that want a file whole: a source file that does not load (rungs/broken_file.py), the
one-shot baseline (rungs/oneshot.py) and a failing test file written in this run (rungs/failing_tests.py). A
python file written again keeps the text of every function whose code it left as it was (a small model
rewrites docstrings' blank lines and the file's last lines in passing), the blank lines between them, and
the file's own ending, so the diff shows the change it means. A reply that is the file as it is, so read,
changes nothing and is rejected.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from greenloop.agent.changes.same_code import same_code
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction, WriteAction
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import (
    Approach,
    Form,
    ReplyRejected,
    ReplyUnchanged,
    keeps_checks,
)
from greenloop.agent.repair.prompts import code_under_test, failing_test_targets, render_failures
from greenloop.agent.repair.risk import functions, without_docstring
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport


@dataclass(frozen=True)
class FileForm(Form):
    """A whole file written again (`bare`: the one-shot baseline's bare prompt, the failures and the file alone)."""

    bare: bool = False
    route = "file"
    small_edits_first = second_look = True  # of the top-ranked function in it

    def asked_for(self, approach: Approach) -> str:
        return f"`{approach.target.path}`"

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        target = approach.target
        source = copy.read(target.path) or ""
        if approach.test:  # a test file written with the code: its expected values may be wrong
            in_file = [t for t in failing_test_targets(index, report, tests) if t.path == target.path]
            values |= {"code": source.rstrip("\n"), "spec": "", "related": code_under_test(index, in_file, tests)}
            return render_prompt("repair_test_file", workspace, **values)
        values["code"] = source.rstrip("\n")
        if self.bare:  # the baseline stays bare: the failures as the runner printed them, nothing said about them
            values["failures"] = render_failures(report, in_words=False) + values["hints"]
        return render_prompt("oneshot" if self.bare else "repair_file", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        target = approach.target
        code = extract_code(reply, target.path, [p for p in copy.paths() if p != target.path])
        if code.problem:
            raise ReplyRejected(code.problem)
        before = copy.read(target.path) or ""
        text = as_it_was(before, code.text) if target.path.endswith(".py") else code.text
        if same_code(target.path, text, before):  # python by syntax tree: comments and spacing change nothing
            raise ReplyUnchanged(f"the reply's `{target.path}` is the file as it is: it changes nothing")
        if approach.test:
            keeps_checks(target, [EditAction(path=target.path, search=before, replace=text)])
        return DebugPlan(diagnosis=f"{target.path} rewritten", actions=[WriteAction(path=target.path, content=text)])


FILE = FileForm()


def as_it_was(before: str, after: str) -> str:
    """`after`, with the text `before` had for each function whose code is the same in both (docstrings,
    comments and formatting aside), its blank lines between two lines that follow each other in both
    (outside strings), and `before`'s ending. `after` as it is when either does not parse."""
    old, new = functions(before), functions(after)
    if not old or not new:
        return after
    lines, was = after.split("\n"), before.split("\n")  # the working copy's text: lines end in `\n` only
    for name, node in sorted(new.items(), key=lambda item: -item[1].lineno):
        prior = old.get(name)
        if prior is not None and _code(prior) == _code(node):
            lines[_first(node) - 1:node.end_lineno] = was[_first(prior) - 1:prior.end_lineno]
    lines = _blank_lines_as_they_were(was, lines)
    return "\n".join(lines).rstrip() + before[len(before.rstrip()):]


def _blank_lines_as_they_were(was: list[str], lines: list[str]) -> list[str]:
    """`lines`, with `was`'s blank lines between two lines that follow each other in both (not inside a
    string); the file's leading blank lines when both begin with the same line."""
    old, old_gaps, _ = _gaps(was)
    new, new_gaps, numbers = _gaps(lines)
    inside = _in_strings("\n".join(lines))
    match: dict[int, int] = {}  # a line of `new` -> the same line of `old`
    for a, b, size in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        match.update((b + k, a + k) for k in range(size))
    match[len(new)] = len(old)  # the blank lines after the last line
    out: list[str] = []
    for j, row in enumerate([*new, None]):
        # the gap between two lines that follow each other in both (a line added or gone: the reply's gap)
        previous = match.get(j - 1) if j else -1  # -1: the start of both
        kept = j in match and previous == match[j] - 1 and (row is None or numbers[j] not in inside)
        out.extend(old_gaps[match[j]] if kept else new_gaps[j])
        if row is not None:
            out.append(row)
    return out


def _gaps(rows: list[str]) -> tuple[list[str], list[list[str]], list[int]]:
    """The lines that are not blank, the blank lines before each of them (and after the last), and their
    line numbers."""
    text: list[str] = []
    gaps: list[list[str]] = [[]]
    numbers: list[int] = []
    for number, row in enumerate(rows, 1):
        if row.strip():
            text.append(row)
            gaps.append([])
            numbers.append(number)
        else:
            gaps[-1].append(row)
    return text, gaps, numbers


def _in_strings(source: str) -> set[int]:
    """The lines of a python module that continue a string begun on an earlier line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(range(1, source.count("\n") + 2))  # nothing is known: every line may be in a string
    return {n for node in ast.walk(tree) if isinstance(node, (ast.Constant, ast.JoinedStr))
            and node.end_lineno is not None for n in range(node.lineno + 1, node.end_lineno + 1)}


def _first(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _code(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return node.name + "".join(ast.dump(part) for part in (node.args, *node.decorator_list, *without_docstring(node.body)))


def whole_file(path: str, why: str) -> Approach:
    return Approach(FILE, Target(path, path, "file", 1, 0), why)
