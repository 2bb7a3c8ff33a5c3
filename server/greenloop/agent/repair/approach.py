"""What one round tries (`Approach`: a target, asked and read in one form) and the interface every form shares.

A form is how a rung asks and reads: the function written again, a whole file, SEARCH/REPLACE blocks,
an install, the failing checks, small edits. Each lives in its rung's module (`rungs/`); the round
(candidate_round.py), the prompt (prompts.py) and the loop ask the approach's form, never its route's name.
The route is the form's name in the records (`CandidateAsked.route`, `repair_<route>` steps).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import Action, DebugPlan, EditAction
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.check_statements import CHECK
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex
from greenloop.retrieval.index import is_test_path
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.repair.tried import Tried

Route = str  # a form's name in the records: "function", "region", "file", "blocks", "install", "checks", "small_edits", ... (one a form;
# events.route_name reads a record's old name)
CODE_PLEASE = "Now give the whole corrected {what} in one code block."


class ReplyRejected(ValueError):
    """A reply that gives no candidate, and why (kept in the records, never a crash)."""


class ReplyUnchanged(ReplyRejected):
    """A reply whose code is the code already in the file."""


class Form:
    """How a round asks for candidates and reads the replies; the defaults are a model's reply, asked N times."""

    route: Route = "function"
    asks_model = True  # an install is asked of no model (its one reply is the package list)
    changes_files = True  # a candidate that changes no file is rejected ("it changes nothing")
    changes_environment = False  # its candidates install (tried apart: environments.py)
    more_passing_only = False  # a candidate moves the state only when more tests pass (small edits)
    small_edits_first = False  # the round is preceded by the small edits of its function (rungs/small_edits.py)
    second_look = False  # a risky green of this form gets the model's second look (second_look.py)
    stands_by = False  # a round the model gave back unchanged is "stood by": not asked first again

    def label(self, approach: Approach) -> str:
        return f"{self.route} {approach.target.path}"

    def kind_of(self, approach: Approach, index: int) -> str:
        """The kind of change the round's `index`-th candidate (from 1) is (risk.py reads it)."""
        return "model"

    def count(self, approach: Approach, asked: int) -> int:
        """How many candidates the round has, `asked` (loop.candidates) by default."""
        return asked

    def given(self, approach: Approach, index: int) -> str | None:
        """The `index`-th candidate's reply when it is known before the round (asked of no model), else None."""
        return approach.given if index == 1 and approach.given else None

    def variant(self, approach: Approach, index: int, tried: Sequence[Tried]) -> Approach | None:
        """The approach the `index`-th candidate asks (None: the round has no further candidate)."""
        return approach

    def reply_limit(self, approach: Approach, copy: WorkingCopy, cap: int) -> int | None:
        """A reply's token limit; None: the settings' cap."""
        return None

    def asked_for(self, approach: Approach) -> str:
        """What a reply gives, in a follow-up question ("" when the form asks none)."""
        return ""

    def please(self, approach: Approach) -> str:
        """What a reply of prose alone is asked next for ("" when the form asks nothing more)."""
        what = self.asked_for(approach)
        return CODE_PLEASE.format(what=what) if what else ""

    def module(self, approach: Approach) -> str:
        """The missing module an install is for ("" for any other)."""
        return ""

    def known_echo(self, approach: Approach, copy: WorkingCopy, so_far: str) -> bool:
        """Whether a reply that begins with `so_far` is already known to give the code back unchanged, whatever
        follows (the round then stops it while it streams). False unless the form knows it for sure."""
        return False

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        """The round's user message, from the values every request shares (prompts.py); `shows`: what the request
        shows beyond the code (settings `prompt.*`, the lines the failing tests ran: prompting/shows.py)."""
        raise NotImplementedError

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        """The reply as a DebugPlan; ReplyRejected says why there is none."""
        raise NotImplementedError


@dataclass(frozen=True)
class Approach:
    """What one round tries: a form, its target and how hot it samples. What only one form reads lives on that
    form (an instance carries it: the install's packages, the failing checks, the small edits' replies)."""

    form: Form
    target: Target
    why: str  # why this approach (first choice, next location, hotter, ...)
    hotter: float = 0.0  # added to every candidate's temperature (the greedy one too, when > 0)
    feedback: str = ""  # what an earlier attempt gave, said to the model
    test: bool = False  # the target is a failing test written in this run: its expected values may be wrong
    given: str = ""  # a reply known before the round (settle.py, a rung of no model): its first candidate
    also: tuple[Target, ...] = ()  # the several-defs form's targets after `target` (rungs/several.py)

    @property
    def route(self) -> Route:
        return self.form.route

    @property
    def label(self) -> str:
        return self.form.label(self)

    def kind_of(self, index: int) -> str:
        return self.form.kind_of(self, index)


def read_reply(
    approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool] = is_test_path
) -> DebugPlan:
    """The reply as a DebugPlan of edits/writes (or an install); ReplyRejected says why there is none."""
    return approach.form.read(approach, copy, reply, is_test)


def with_feedback(approach: Approach, feedback: str) -> Approach:
    return replace(approach, feedback=feedback)


def stood_by_key(target: Target) -> str:
    return f"{target.path}::{target.symbol}"


def keeps_checks(target: Target, actions: Sequence[Action]) -> None:
    """A test may get right expected values, never fewer checks: a test emptied to pass proves nothing."""
    before = sum(len(CHECK.findall(a.search)) for a in actions if isinstance(a, EditAction))
    after = sum(len(CHECK.findall(a.replace)) for a in actions if isinstance(a, EditAction))
    if after < before:
        what = target.path if target.kind == "file" else target.name
        raise ReplyRejected(f"the reply's `{what}` has {after} checks where the tests have {before}: "
                            "correct the expected values that are wrong and keep every check")
