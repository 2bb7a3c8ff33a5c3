"""Renders loop events on the terminal (rich), and the final summary of a run."""

from __future__ import annotations

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from greenloop.agent.events import CandidateAsked, CandidateTested, Done, Event
from greenloop.agent.orchestration.describe import Tone, describe, is_small_edit, tone

STYLES: dict[Tone, str] = {
    "heading": "bold cyan",
    "good": "green",
    "bad": "red",
    "warning": "yellow",
    "detail": "dim",
    "plain": "",
}
TOP_LEVEL = ("run_started", "environment", "iteration_started")  # the rest is indented under its iteration


class EventPrinter:
    """One line per meaningful event; the diagnosis streams inline. Event text is never read as markup.

    Small edits (route `small_edits`, up to `loop.small_edits` of them, tested in seconds) are not a line each:
    one line says they are tried, and a tested edit shows only when it passes more tests than the
    round's edits before it (the round's line gives the tally; the run store keeps every one).
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._streaming = False
        self._streamed = False  # this iteration's diagnosis already went out as deltas
        self._edits_best = 0  # the most tests passing by one of this round's small edits so far

    def __call__(self, event: Event) -> None:
        c = self.console
        if event.kind == "diagnosis_delta":
            if not self._streaming:
                c.print(Text("  diagnosis: ", style="dim"), end="")
                self._streaming = self._streamed = True
            c.print(Text(event.text), end="")
            return
        line: Text | None = None
        if isinstance(event, CandidateAsked | CandidateTested) and is_small_edit(event) \
                and (line := self._small_edit(event)) is None:
            return
        if self._streaming:
            c.print()
            self._streaming = False
        if event.kind == "iteration_started":
            self._streamed = False
        line = line or render(event, streamed=self._streamed)
        if line is not None:
            c.print(line)

    def _small_edit(self, event: CandidateAsked | CandidateTested) -> Text | None:
        """The line a small edit gets: one when they start, then only an edit that passes more tests
        than the round's earlier ones (or all of them)."""
        if isinstance(event, CandidateAsked):
            if event.index != 1:
                return None
            self._edits_best = 0
            return Text(f"  {event.target}: up to {event.of}, tested before the model is asked", style=STYLES["detail"])
        if event.status != "tested" or not (event.green or event.passed > self._edits_best):
            return None
        self._edits_best = event.passed
        return render(event, streamed=self._streamed)

    def summary(self, done: Done, *, show_diff: bool = True) -> None:
        c = self.console
        c.rule(Text(done.outcome, style=f"bold {STYLES[tone(done)]}"))
        c.print(Text(done.summary))
        if done.changes.label:
            c.print(Text(done.changes.label, style="bold yellow"))
        if done.changes.kind:
            c.print(Text(f"change: {done.changes.kind}" + (f"; chosen: {done.changes.reason}" if done.changes.reason
                                                          else ""), style="dim"))
        if done.evidence and done.evidence != done.summary:
            c.print(Text(done.evidence, style="dim"))
        c.print(
            Text(
                f"iterations {done.iterations} · tokens {done.prompt_tokens}+{done.completion_tokens} · "
                f"cost ${done.cost:.4f} · time {done.seconds:.1f} s"
            )
        )
        if show_diff and done.changes.diff:
            c.print(Syntax(done.changes.diff, "diff", theme="ansi_dark", word_wrap=True))
        if show_diff and done.changes.other_diff:  # another green change the run found, not chosen
            c.print(Text(f"another change that passes ({done.changes.other_kind}), not applied:", style="dim"))
            c.print(Syntax(done.changes.other_diff, "diff", theme="ansi_dark", word_wrap=True))
        if done.changes.packages:
            c.print(Text(f"packages the fix needs: {' '.join(done.changes.packages)}"))
        for installed in done.changes.installs:
            c.print(Text(f"  installed {installed.describe()}", style="dim"))
        if done.changes.commands:
            c.print(Text(f"environment commands: {'; '.join(done.changes.commands)}"))


def render(event: Event, *, streamed: bool = False) -> Text | None:
    """The terminal line of an event, styled by its tone; None for events shown elsewhere."""
    if event.kind == "done" or (event.kind == "diagnosis" and streamed):
        return None  # the summary shows the outcome; a streamed diagnosis is already on screen
    indent = "" if event.kind in TOP_LEVEL else "  "
    line = Text(indent + describe(event), style=STYLES[tone(event)])
    if event.kind == "environment":  # each source passed over and each remedy, as the step's own lines
        for said in event.lines:
            line.append(f"\n{indent}  {said}", style="dim")
    return line
