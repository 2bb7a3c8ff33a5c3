"""Rung "missing name": the failing tests use a name that a module of the project lacks and the project defines nowhere.

A test that reads `errors.MissingThing`, or imports it, stops there (Python's `module 'errors' has no
attribute 'MissingThing'`, `cannot import name 'MissingThing' from 'errors'`) before it calls any code:
coverage ranks nothing, and no change to the code it would call can pass it. The fix must add the name
to that module, a file no ranked def may be in. This rung asks for that: the module's file and the lines
of the failing tests that use the name, the reply SEARCH/REPLACE blocks on that file only (never a test
file). A candidate that adds the name gets the tests past it (progress.py), and the ladder starts again
on the failure behind it. A name the project defines elsewhere is not this rung's: the request's hint
(prompts.py `where_defined`) says where it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected
from greenloop.agent.repair.ladder_rung import FILE_ROUTE_LINES, LadderState, Rung
from greenloop.agent.repair.places import known_path
from greenloop.agent.repair.progress import missing_names
from greenloop.agent.repair.rungs.blocks import parse_blocks
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex, language_of, outline
from greenloop.retrieval.tags import extract
from greenloop_sandbox import TestReport

USES_SHOWN = 8  # the test lines that name it
HEAD_LINES = 150  # a module longer than FILE_ROUTE_LINES: its first lines and its outline


@dataclass(frozen=True)
class MissingNameForm(Form):
    """The module's file and the tests' uses of the name; the reply: blocks that add it to that file."""

    name: str = ""
    owner: str = ""  # the dotted module the tests read it from
    route = "blocks"

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        path = approach.target.path
        values.update(missing=self.name, module=self.owner, code=_shown(path, copy.read(path) or ""),
                      uses=_uses(self.name, report, copy, tests))
        return render_prompt("repair_missing_name", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        path = approach.target.path
        edits = parse_blocks(reply, path)
        if not edits:
            raise ReplyRejected("the reply holds no SEARCH/REPLACE block")
        other = [e.path for e in edits if e.path != path and not path.endswith("/" + e.path.lstrip("./"))]
        if other:
            raise ReplyRejected(f"a block names `{other[0]}`: only `{path}` may change here, to add `{self.name}`")
        return DebugPlan(diagnosis=f"add `{self.name}` to `{path}`",
                         actions=[e.model_copy(update={"path": path}) for e in edits])


class MissingName(Rung):
    name = "missing name"

    def applies(self, state: LadderState) -> list[Approach]:
        found = []
        for module, name in sorted(missing_names(state.report)):
            path = _module_path(module, state)
            if path and not _defined(name, state):
                form = MissingNameForm(name=name, owner=module)
                why = f"the tests use `{name}`, which `{module}` lacks"
                found.append(Approach(form, Target(path, path, "file", 1, state.lines(path)), why))
        return found[:1]  # one at a time: the state that has it shows the next


def _module_path(module: str, state: LadderState) -> str:
    """The project's (non-test) file of a dotted module name, "" when the project holds none."""
    stem = module.replace(".", "/")
    paths = sorted(state.copy.paths(), key=len)  # the module at the root before one in a folder (`src/`)
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        path = next((p for p in paths if p == candidate or p.endswith("/" + candidate)), "")
        if path and not state.tests.is_test(path):
            return path
    return ""


def _defined(name: str, state: LadderState) -> bool:
    """Whether a source file of the project (not a test) defines `name`: a def or class, or a top-level assignment."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    assigned = re.compile(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=", re.M)
    for path in state.copy.paths():
        text = state.copy.read(path) or ""
        if state.tests.is_test(path) or not language_of(path) or not word.search(text):
            continue
        if assigned.search(text) or any(d.name == name for d in extract(path, text.encode()).definitions):
            return True
    return False


def _shown(path: str, text: str) -> str:
    """The module's text: whole, or for a long one its first lines and the outline of what it defines."""
    rows = text.rstrip("\n").split("\n")
    if len(rows) <= FILE_ROUTE_LINES:
        return "\n".join(rows)
    return ("\n".join(rows[:HEAD_LINES]) + f"\n# ... ({len(rows) - HEAD_LINES} more lines; it defines:)\n"
            + "\n".join(f"# {row}" for row in outline(path, text).splitlines()))


def _uses(name: str, report: TestReport, copy: WorkingCopy, tests: TestFiles) -> str:
    """The lines of the failing tests' files that name `name`, each as `path:line: text` (at most USES_SHOWN)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    files = dict.fromkeys(known_path(copy.paths(), f.file or f.test_id.split("::", 1)[0]) for f in report.failures)
    shown: list[str] = []
    for path in (p for p in files if p and tests.is_test(p)):
        for number, row in enumerate((copy.read(path) or "").splitlines(), 1):
            if word.search(row) and len(shown) < USES_SHOWN:
                shown.append(f"{path}:{number}: {row.strip()}")
    return "\n".join(shown) or f"(the failures name `{name}`)"


RUNG = MissingName()
