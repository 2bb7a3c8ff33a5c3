"""`greenloop generate`: a project from a prompt, planned, written, tested and fixed until green."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from greenloop.agent.events import Done
from greenloop.cli.common import settings_from_args
from greenloop.cli.exit_codes import for_outcome
from greenloop.cli.fix import _consume
from greenloop.cli.progress import EventPrinter
from greenloop.cli.verdict import ask_verdict
from greenloop.errors import GreenloopError
from greenloop.settings import Settings
from greenloop_sandbox.languages import template_names


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "generate", parents=[common], help="generate a project from a prompt", description=__doc__
    )
    p.add_argument("prompt", nargs="?", help="what to build (or use --prompt-file / --from-plan)")
    p.add_argument("--prompt-file", type=Path, metavar="F", help="read the prompt from a file ('-': stdin)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder (empty or new)")
    p.add_argument(
        "--template", choices=template_names(), help="language template (default: python)"
    )
    p.add_argument("--small-steps", action="store_true", help="build and test one component at a time")
    p.add_argument("--force", action="store_true", help="write into a non-empty --out folder")
    p.add_argument("--from-plan", type=Path, metavar="F", help="re-run from an edited .greenloop/plan.md")
    p.add_argument("--clarify", action="store_true", help="answer the model's questions before it plans")
    p.add_argument("--json", action="store_true", help="print the result as JSON (no progress)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from greenloop.agent.generate import GenerateRequest, generate

    settings = settings_from_args(args, Path.cwd())
    prompt = read_prompt(args)
    template = args.template or "python"
    console = Console(stderr=args.json)
    answers = None
    if (args.clarify or settings.generate.clarify) and not args.json and prompt and sys.stdin.isatty():
        answers = ask_questions(prompt, template, args.out, settings, console)
    request = GenerateRequest(
        prompt=prompt,
        out_dir=args.out,
        template=template,
        small_steps=args.small_steps,
        force=args.force,
        from_plan=args.from_plan,
        answers=answers,
    )
    events = generate(request, settings)  # bad input raises here, before any model call
    printer = EventPrinter(console)
    done = asyncio.run(_consume(events, None if args.json else printer))
    out = request.out_dir.expanduser().absolute()
    if args.json:
        payload = done.model_dump(mode="json")
        payload["out_dir"] = str(out)
        payload["files"] = [c.path for c in done.changes.files]
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        printer.summary(done, show_diff=False)
        _list_files(console, done)
        ask_verdict(settings, out, done.run_id, console)
    return for_outcome(done.outcome, green=("green",))


def read_prompt(args: argparse.Namespace) -> str:
    """The prompt from the argument or --prompt-file; GreenloopError when both or neither are given."""
    if args.prompt is not None and args.prompt_file is not None:
        raise GreenloopError("give the prompt either as an argument or with --prompt-file, not both")
    if args.prompt_file is not None:
        if str(args.prompt_file) == "-":
            return str(sys.stdin.read())
        try:
            return str(args.prompt_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise GreenloopError(f"cannot read the prompt file {args.prompt_file}: {exc}") from exc
    if args.prompt is None and args.from_plan is None:
        raise GreenloopError('say what to build: greenloop generate "PROMPT" --out DIR (or --prompt-file F)')
    return str(args.prompt or "")


def ask_questions(
    prompt: str, template: str, out: Path, settings: Settings, console: Console
) -> dict[str, str]:
    """The model's clarifying questions, answered on the terminal (an empty answer skips one)."""
    from greenloop.agent.generate import clarify

    questions = asyncio.run(clarify(prompt, settings, template=template, workspace=out))
    answers: dict[str, str] = {}
    if questions:
        console.print("[bold]A few questions first[/] (press Enter to skip one):")
    for question in questions:
        try:
            answers[question] = console.input(f"  {question} ")
        except (EOFError, KeyboardInterrupt):
            break
    return answers


def _list_files(console: Console, done: Done) -> None:
    files = [c.path for c in done.changes.files]
    if files:
        console.print(f"[green]wrote {len(files)} file(s):[/] {escape(', '.join(files))}")
    if done.changes.packages:
        console.print(f"packages installed for the tests: {escape(' '.join(done.changes.packages))}")
