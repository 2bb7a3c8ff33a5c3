"""The terminal front end: `greenloop <command>`; one module per subcommand.

Each subcommand module has `register(subparsers, common)` that adds its parser
and sets `func(args) -> int` (the exit code). Front ends add no loop logic.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from greenloop import __version__
from greenloop.cli.common import common_parser
from greenloop.errors import GreenloopError

# Subcommand modules, in the order `--help` lists them. A module that is not
# there yet (work in progress) is skipped rather than breaking the CLI.
SUBCOMMANDS = ["serve", "fix", "improve", "generate", "locate", "sandbox", "runs", "bench", "model", "doctor"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="greenloop", description="Turn red tests green.")
    parser.add_argument("--version", action="version", version=f"greenloop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_parser()
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"greenloop.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"greenloop.cli.{name}":
                raise
            continue
        module.register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except GreenloopError as exc:
        print(f"greenloop: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("greenloop: interrupted", file=sys.stderr)
        return 130
