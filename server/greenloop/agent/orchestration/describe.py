"""One plain line per loop event, and its tone; every front end words events the same way."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from greenloop.agent import events as ev
from greenloop.agent.repair.rungs.small_edits import SmallEditsForm

# What a line means, for front ends that colour it: a heading, good or bad news, a warning, a detail.
Tone = Literal["heading", "good", "bad", "warning", "detail", "plain"]


def describe(event: BaseModel) -> str:
    """A one-line, plain-text description of an event (no markup: paths and code may hold brackets)."""
    match event:
        case ev.RunStarted():
            seed = "" if event.seed is None else f" (seed {event.seed})"
            return f"greenloop {event.mode} {event.workspace}{seed}"
        case ev.IterationStarted():
            return f"iteration {event.iteration}/{event.max_iterations}"
        case ev.TestsRan():
            return f"tests: {event.passed} passed, {event.failed} failed, {event.errors} errors"
        case ev.LocationsFound():
            top = ", ".join(f"{loc.get('path')}:{loc.get('symbol')}" for loc in event.locations[:3])
            return f"code: {top or '(none)'} ({event.context_tokens} tokens of context)"
        case ev.DiagnosisDelta():
            return event.text
        case ev.Diagnosis():
            text = event.text.strip()
            return f"diagnosis: {text.splitlines()[0] if text else '(empty)'}"
        case ev.PlanMade():
            n = len(event.plan.actions)
            return f"plan: {n} action{'' if n == 1 else 's'}"
        case ev.EditApplied():
            return f"applied {event.action} {event.path} ({event.match})"
        case ev.EditRejected():
            reason = event.reason.strip()
            return f"rejected {event.path}: {reason.splitlines()[0] if reason else 'no reason given'}"
        case ev.EnvironmentChanged():
            said = f"{event.action} {event.detail}: {'ok' if event.ok else 'failed'}"
            return said + "".join(f"; {p.describe()}" for p in event.installed)
        case ev.EnvironmentReady():
            return event.summary
        case ev.CandidateAsked() if is_small_edit(event):  # asked of no model: no temperature, no seed
            return f"candidate {event.index}/{event.of}: {event.target}"
        case ev.CandidateAsked():
            seed = "" if event.seed is None else f", seed {event.seed}"
            what = event.target if event.target.startswith(f"{event.route} ") else f"{event.route} {event.target}"
            return f"candidate {event.index}/{event.of}: {what} (temperature {event.temperature:g}{seed})"
        case ev.CandidateTested():
            if event.status == "rejected":
                return f"candidate {event.index} rejected: {event.reason.splitlines()[0] if event.reason else '?'}"
            scope = "all tests" if event.scope == "all" else "the failing tests"
            kind = f" ({event.change_kind})" if event.change_kind else ""
            return (f"candidate {event.index}{kind}: {event.passed}/{event.passed + event.failed + event.errors} "
                    f"passing ({scope}){' - green' if event.green else ''}")
        case ev.RoundEnded():
            best = f"best: candidate {event.best}, {event.best_summary}" if event.best else "no candidate tested"
            verdict = {"green": "green", "better": "moved to it", "nothing_better": "nothing better; state kept",
                       "no_candidates": "no usable candidate; state kept", "budget": "budget spent"}[event.ended]
            return f"round {event.iteration} ({event.approach}): {event.tested}/{event.tried} tested, {best}; {verdict}"
        case ev.BudgetUsed():
            tokens = event.prompt_tokens + event.completion_tokens
            return f"{tokens} tokens, ${event.cost:.4f}, {event.seconds:.0f} s"
        case ev.Message():
            return event.text
        case ev.Done():
            label = f" {event.changes.label}." if event.changes.label else ""
            return f"{event.outcome}: {event.summary}{label}"
    return str(getattr(event, "kind", "event"))


def is_small_edit(event: ev.CandidateAsked | ev.CandidateTested) -> bool:
    """Whether the candidate is one of a round of small edits (rungs/small_edits.py), by the form's name in records."""
    return event.route == SmallEditsForm.route


def tone(event: BaseModel) -> Tone:
    """How a front end may colour the event's line."""
    match event:
        case ev.RunStarted() | ev.IterationStarted():
            return "heading"
        case ev.TestsRan():
            return "bad" if event.failed or event.errors else "good"
        case ev.EditApplied():
            return "good"
        case ev.EditRejected():
            return "warning"
        case ev.EnvironmentChanged():
            return "good" if event.ok else "bad"
        case ev.EnvironmentReady():
            return "bad" if event.problem is not None else "detail"
        case ev.CandidateTested():
            return "good" if event.green else "warning" if event.status == "rejected" else "detail"
        case ev.RoundEnded():
            return "good" if event.moved else "warning"
        case ev.BudgetUsed() | ev.LocationsFound() | ev.CandidateAsked():
            return "detail"
        case ev.Message():
            return "bad" if event.level == "error" else "warning" if event.level == "warning" else "detail"
        case ev.Done():
            return "good" if event.outcome in ("green", "already_green") else "warning"
    return "plain"
