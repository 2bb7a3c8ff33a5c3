"""Rung "several": the top-ranked function with the code it runs (up to MAX_DEFS, across files), shown in one
request whose reply may change several of them; each definition the reply gives is spliced in at its own place.

A fix that needs two defs changed together cannot go green one def at a time: each function request
shows one def and its reply changes that one only, and a change to one alone makes no test pass, so
the state never moves (the oracle's loss table: "shown only part of a multi-def fix"). This rung
shows them together, each with its place, once the one-def rungs and the blocks on the top file have
had their rounds; a def the reply leaves out stays as it is. The group is chosen by relevance, within
MAX_LINES: the top function, then the defs it calls that a failing test ran (retrieval's "callee"
locations: a small helper in another file the ranking puts far down), then the other shown functions,
then the ranked ones the packing left out. A second request, when it differs, follows the failing
test's own calls down (retrieval's "path" locations): the top def is not on the way to a def reached
only through a function value (a filter passed in a parameter).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction, WriteAction
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows, ran_text
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected, ReplyUnchanged
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.agent.repair.splice import SpliceError, Target, Unchanged, splice
from greenloop.retrieval import Location, RepoIndex, language_of
from greenloop.tokens import count_text
from greenloop_sandbox import TestReport

MAX_DEFS = 3  # functions shown together
MAX_LINES = 240  # their lines together: a longer request is the blocks rung's whole file again
SEVERAL_TOKENS = 1024


class SeveralForm(Form):
    """Several functions shown at once; the reply's definitions spliced in, each at its own."""

    route = "function"

    def label(self, approach: Approach) -> str:
        return ", ".join(f"`{t.symbol}`" for t in targets(approach)) + " together"

    def asked_for(self, approach: Approach) -> str:
        return "definitions you change"

    def reply_limit(self, approach: Approach, copy: WorkingCopy, cap: int) -> int | None:
        need = count_text("\n".join(row for t in targets(approach) for row in _rows(copy, t))) * 5 // 4 + 200
        return min(max(SEVERAL_TOKENS, need), max(cap, SEVERAL_TOKENS))

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        shows = shows or RequestShows()
        shown = [f"### `{t.symbol}` in `{t.path}` (lines {t.start_line}-{t.end_line})\n```{language_of(t.path) or ''}\n"
                 + "\n".join(_rows(copy, t)) + "\n```"
                 + ran_text(shows, copy, index, t.path, t.start_line, t.end_line, t.name).rstrip("\n")
                 for t in targets(approach)]
        values |= {"code": "\n\n".join(shown), "count": str(len(shown))}
        return render_prompt("repair_functions", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        texts: dict[str, str] = {}
        why: list[str] = []
        # bottom-up in each file: a splice leaves the lines above it where they were
        for target in sorted(targets(approach), key=lambda t: (t.path, -t.start_line)):
            before = texts.get(target.path, copy.read(target.path) or "")
            try:
                edits = splice(before, target, reply)
            except Unchanged:
                continue
            except SpliceError as exc:
                why.append(str(exc))
                continue
            texts[target.path] = _applied(before, edits)
        if not texts:
            if why and len(why) == len(targets(approach)):
                raise ReplyRejected(why[0])
            raise ReplyUnchanged("the reply changes none of the definitions shown")
        actions = [WriteAction(path=path, content=text) for path, text in texts.items()]
        return DebugPlan(diagnosis=f"{len(texts)} file(s) changed in several definitions", actions=list(actions))


SEVERAL = SeveralForm()


def targets(approach: Approach) -> list[Target]:
    return [approach.target, *approach.also]


def _rows(copy: WorkingCopy, target: Target) -> list[str]:
    return (copy.read(target.path) or "").splitlines()[target.start_line - 1 : target.end_line]


def _applied(text: str, edits: list[EditAction]) -> str:
    for edit in edits:
        text = text.replace(edit.search, edit.replace, 1)
    return text


class Several(Rung):
    name = "several"

    def applies(self, state: LadderState) -> list[Approach]:
        first, path = asked_groups(state)
        out = [Approach(SEVERAL, first[0], "the top-ranked functions together", also=tuple(first[1:]))] if first else []
        if path:
            out.append(Approach(SEVERAL, path[0], "the top-ranked functions together, from the failing test's calls",
                                also=tuple(path[1:])))
        return out


def asked_groups(state: LadderState) -> tuple[list[Target], list[Target]]:
    """The groups this rung asks ([] where it asks none): the top def's, then the failing test's calls' when it differs."""
    first = group(group_order(state))
    path = group([loc for loc in state.unshown if loc.role == "path"])
    first = first if len(first) >= 2 else []
    differs = {(t.path, t.start_line) for t in path} != {(t.path, t.start_line) for t in first}
    return first, path if len(path) >= 2 and differs else []


def group(order: list[Location]) -> list[Target]:
    """The first of `order` that fit together: MAX_DEFS at most, MAX_LINES in all, none overlapping another."""
    chosen: list[Target] = []
    for loc in order:
        target = target_of(loc)
        overlaps = any(t.path == target.path and t.start_line <= target.end_line and target.start_line <= t.end_line
                       for t in chosen)
        lines = sum(t.end_line - t.start_line + 1 for t in chosen) + target.end_line - target.start_line + 1
        if not overlaps and lines <= MAX_LINES:
            chosen.append(target)
        if len(chosen) == MAX_DEFS:
            break
    return chosen


def group_order(state: LadderState) -> list[Location]:
    """The functions a request of several may show, most relevant first: the top-ranked one, the defs it
    calls that a failing test ran (related.py), the other shown functions, then the ranked ones past them.

    When coverage saw the failing tests run the top def, a def they never ran is left out: a change to it
    cannot move them, and beside a top def with no executed callee it only filled the request with
    unrelated code (a regex helper asked with two file writers no test ran). Without coverage, all are kept."""
    functions = state.functions
    if not functions:
        return []
    callees = [loc for loc in state.unshown if loc.role == "callee"]
    ranked = [loc for loc in state.unshown if loc.role == "ranked"]
    covered = ran(functions[0])
    seen: set[str] = set()
    out: list[Location] = []
    for loc in [functions[0], *callees, *functions[1:], *ranked]:
        if loc.key not in seen and (not covered or ran(loc)):
            seen.add(loc.key)
            out.append(loc)
    return out


def ran(loc: Location) -> bool:
    """Whether coverage saw a failing test run `loc` (its `executed` signal; a callee is one by its role)."""
    return loc.role == "callee" or any(s.name == "executed" and s.value > 0 for s in loc.signals)


RUNG = Several()
