"""Renders loop events on the terminal (rich), and the final summary of a run."""

from __future__ import annotations

from rich.console import Console
from rich.syntax import Syntax

from greenloop.agent.events import Done, Event


class EventPrinter:
    """One line per meaningful event; the diagnosis streams inline."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._streaming = False

    def __call__(self, event: Event) -> None:
        c = self.console
        if event.kind == "diagnosis_delta":
            if not self._streaming:
                c.print("[dim]  diagnosis:[/] ", end="")
                self._streaming = True
            c.print(event.text, end="", markup=False, highlight=False)
            return
        if self._streaming:
            c.print()
            self._streaming = False
        line = describe(event)
        if line:
            c.print(line, highlight=False)

    def summary(self, done: Done, *, show_diff: bool = True) -> None:
        c = self.console
        color = {"green": "green", "already_green": "green"}.get(done.outcome, "yellow")
        c.rule(f"[bold {color}]{done.outcome}[/]")
        c.print(done.summary, markup=False)
        if done.evidence and done.evidence != done.summary:
            c.print(f"[dim]{done.evidence}[/]", highlight=False)
        c.print(
            f"iterations {done.iterations} · tokens {done.prompt_tokens}+{done.completion_tokens} · "
            f"cost ${done.cost:.4f} · time {done.seconds:.1f} s"
        )
        if show_diff and done.changes.diff:
            c.print(Syntax(done.changes.diff, "diff", theme="ansi_dark", word_wrap=True))
        if done.changes.packages:
            c.print(f"packages the fix needs: {' '.join(done.changes.packages)}")
        if done.changes.commands:
            c.print(f"environment commands: {'; '.join(done.changes.commands)}")


def describe(event: Event) -> str:
    """A one-line, human description of an event ('' for events not worth a line)."""
    if event.kind == "run_started":
        return f"[bold]greenloop {event.mode}[/] {event.workspace} (seed {event.seed})"
    if event.kind == "iteration_started":
        return f"[bold cyan]iteration {event.iteration}/{event.max_iterations}[/]"
    if event.kind == "tests_ran":
        color = "green" if not (event.failed or event.errors) else "red"
        return f"  tests: [{color}]{event.passed} passed, {event.failed} failed, {event.errors} errors[/]"
    if event.kind == "locations":
        top = ", ".join(f"{loc['path']}:{loc['symbol']}" for loc in event.locations[:3])
        return f"  code: {top or '(none)'} [dim]({event.context_tokens} tokens of context)[/]"
    if event.kind == "plan":
        return f"  plan: {len(event.plan.actions)} action(s)"
    if event.kind == "edit_applied":
        return f"  [green]applied[/] {event.action} {event.path} [dim]({event.match})[/]"
    if event.kind == "edit_rejected":
        return f"  [yellow]rejected[/] {event.path}: {event.reason.splitlines()[0]}"
    if event.kind == "environment_changed":
        ok = "[green]ok[/]" if event.ok else "[red]failed[/]"
        return f"  {event.action} {event.detail}: {ok}"
    if event.kind == "budget":
        return f"  [dim]{event.prompt_tokens + event.completion_tokens} tokens, ${event.cost:.4f}, {event.seconds:.0f} s[/]"
    if event.kind == "message":
        color = {"warning": "yellow", "error": "red"}.get(event.level, "dim")
        return f"  [{color}]{event.text}[/]"
    return ""
