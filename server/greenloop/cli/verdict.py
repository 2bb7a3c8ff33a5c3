"""The "did it run / work / perfect?" question at the end of a CLI run; the answer goes to the run store."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from greenloop.errors import GreenloopError
from greenloop.settings import Settings

CHOICES = {"p": "perfect", "w": "works", "r": "runs", "f": "failed", "s": "skip", "": "skip"}
QUESTION = "Did it run / work / perfect? [p]erfect [w]orks-with-changes [r]uns-only [f]ailed [S]kip: "


def parse_answer(text: str) -> str | None:
    """A typed answer -> a verdict word ("skip" for an empty answer), or None when it is not one."""
    answer = text.strip().lower()
    if answer in CHOICES:
        return CHOICES[answer]
    if answer in CHOICES.values():
        return answer
    return None


def ask_verdict(
    settings: Settings, workspace: Path | None, run_id: str, console: Console, *, json_output: bool = False
) -> None:
    """Ask once (re-asks on a typo); skipped without a TTY, with --json, or when runs are not recorded."""
    if json_output or not run_id or not settings.runs.enabled or not sys.stdin.isatty():
        return
    verdict: str | None = None
    while verdict is None:
        try:
            typed = console.input(QUESTION)
        except (EOFError, KeyboardInterrupt):
            return
        verdict = parse_answer(typed)
        if verdict is None:
            console.print("[yellow]answer p, w, r, f or s[/]")
    if verdict == "skip":
        return
    from greenloop.run_records import record_verdict

    try:
        record_verdict(settings, workspace, run_id, verdict)
    except GreenloopError as exc:
        console.print(f"[yellow]could not record the answer: {exc}[/]")
        return
    console.print(f"[dim]recorded: {verdict}[/]")
