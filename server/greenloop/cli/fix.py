"""`greenloop fix`: run the test-fix loop on a workspace; `--apply` writes the result."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from greenloop.agent import FixRequest, apply_changes, fix
from greenloop.agent.events import Done, Event
from greenloop.cli.common import settings_from_args
from greenloop.cli.exit_codes import for_outcome
from greenloop.cli.progress import EventPrinter
from greenloop.cli.verdict import ask_verdict
from greenloop.errors import GreenloopError
from greenloop.settings import Settings


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("fix", parents=[common], help="make failing tests pass", description=__doc__)
    p.add_argument("workspace", nargs="?", default=".", type=Path, help="project folder (default: .)")
    p.add_argument("--test", dest="tests", action="append", metavar="ID", help="only this test (repeatable)")
    p.add_argument("--allow-install", dest="allow_install", action="append", default=[], metavar="NAME",
                   help="install this package when the run needs it, though the project does not declare it "
                   "(repeatable; sandbox.allow_install)")
    add_result_flags(p)
    p.set_defaults(func=run)


def add_result_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--apply", action="store_true", help="write the change set to the workspace when done")
    p.add_argument("--json", action="store_true", help="print the result as JSON (no progress)")


def run(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args.workspace)
    settings = settings_from_args(args, workspace)
    settings.sandbox.allow_install = [*settings.sandbox.allow_install, *args.allow_install]
    request = FixRequest(workspace=workspace, test_ids=args.tests)
    return drive(lambda: fix(request, settings), args, settings, workspace)


def resolve_workspace(path: Path) -> Path:
    workspace = path.expanduser().resolve()
    if not workspace.is_dir():
        raise GreenloopError(f"{path} is not a folder; name the project folder to work on")
    return workspace


def drive(
    start: Callable[[], AsyncIterator[Event]], args: argparse.Namespace, settings: Settings, workspace: Path
) -> int:
    """Consume a run's events (printing them), then apply/print the result; the exit code of its outcome."""
    console = Console(stderr=args.json)
    printer = EventPrinter(console)
    done = asyncio.run(_consume(start(), None if args.json else printer))
    applied: list[str] = []
    if args.apply and done.offers_changes and done.changes.files:
        applied = apply_changes(workspace, done.changes)
    if args.json:
        payload = done.model_dump(mode="json")
        payload["applied"] = applied
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        printer.summary(done)
        _say_what_happened(console, done, applied, args.apply)
        ask_verdict(settings, workspace, done.run_id, console)
    return for_outcome(done.outcome)


async def _consume(events: AsyncIterator[Event], printer: EventPrinter | None) -> Done:
    done: Done | None = None
    async for event in events:
        if printer is not None:
            printer(event)
        if isinstance(event, Done):
            done = event
    if done is None:  # the loop always ends with Done; this guards a broken generator
        raise GreenloopError("the run ended without a result")
    return done


def _say_what_happened(console: Console, done: Done, applied: list[str], apply: bool) -> None:
    if applied:
        console.print(f"[green]wrote {len(applied)} file(s):[/] {escape(', '.join(applied))}")
    elif done.offers_changes and not apply:
        console.print("[dim]Your files are unchanged; run again with --apply to write this change set.[/]")
    elif done.changes.files and not done.offers_changes:
        console.print("[yellow]Not applied: the tests did not pass with this change set.[/]")
