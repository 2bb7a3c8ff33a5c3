"""Rung "blocks": SEARCH/REPLACE blocks on the top file (a change in several places), parsed into edit actions.

The shape (Aider's, which models have seen many times):

    path/to/file.py
    <<<<<<< SEARCH
    lines now in the file
    =======
    the new lines
    >>>>>>> REPLACE

Code stays plain text (no JSON string escaping); the file name is the last non-empty line
before the block, else the one the request was about.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport

_BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^[ \t]*={5,9}[ \t]*\n(?P<replace>.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.M | re.S,
)
_PATH_LINE = re.compile(r"^[`*#\s]*(?:file:\s*)?(?P<path>[\w./-]+\.\w+)[`*\s:]*$", re.I)


def parse_blocks(reply: str, default_path: str) -> list[EditAction]:
    """Every SEARCH/REPLACE block of `reply` as an edit; empty when there is none."""
    edits: list[EditAction] = []
    path = default_path
    last_end = 0
    for match in _BLOCK.finditer(reply):
        named = _path_before(reply[last_end : match.start()])
        path = named or path
        search = match.group("search")
        replace = match.group("replace")
        edits.append(EditAction(path=path, search=search, replace=replace))
        last_end = match.end()
    return edits


def _path_before(text: str) -> str:
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if not stripped or stripped.startswith(("```", "~~~")):
            continue
        match = _PATH_LINE.match(stripped)
        return match.group("path") if match else ""
    return ""


class BlocksForm(Form):
    """SEARCH/REPLACE blocks on a file (several places)."""

    route = "blocks"

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        values["code"] = (copy.read(approach.target.path) or "").rstrip("\n")
        return render_prompt("repair_blocks", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        edits = parse_blocks(reply, approach.target.path)
        if not edits:
            raise ReplyRejected("the reply holds no SEARCH/REPLACE block")
        return DebugPlan(diagnosis="changes in several places", actions=list(edits))


BLOCKS = BlocksForm()


def blocks_on(path: str, why: str, state: LadderState, given: str = "") -> Approach:
    return Approach(BLOCKS, Target(path, path, "file", 1, state.lines(path)), why, given=given)


class Blocks(Rung):
    name = "blocks"

    def applies(self, state: LadderState) -> list[Approach]:
        if not state.sources:
            return []
        return [blocks_on(state.sources[0].path, "changes in several places", state)]


RUNG = Blocks()
