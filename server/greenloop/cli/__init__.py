"""The terminal front end: `greenloop <command>`; one module per subcommand.

Each subcommand module has `register(subparsers, common)` that adds its parser
and sets `func(args) -> int` (the exit code, `greenloop.cli.exit_codes`). Front ends add no loop logic.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from greenloop import __version__
from greenloop.cli.common import common_parser
from greenloop.errors import GreenloopError

# Subcommand modules, in the order `--help` lists them.
SUBCOMMANDS = ["serve", "fix", "improve", "generate", "locate", "sandbox", "runs", "bench", "model", "config", "doctor"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="greenloop", description="Turn red tests green.")
    parser.add_argument("--version", action="version", version=f"greenloop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_parser()
    for name in SUBCOMMANDS:
        importlib.import_module(f"greenloop.cli.{name}").register(sub, common)
    return parser


_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

# Signals that end a run the way Ctrl-C does, so that its cleanup runs (sandboxes, model server).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    received: list[int] = []
    previous = stop_like_ctrl_c(received)
    try:
        return int(args.func(args))
    except GreenloopError as exc:
        print(f"greenloop: {exc}", file=sys.stderr)
        return exc.exit_code  # 2: usage, 3: environment (greenloop.cli.exit_codes)
    except KeyboardInterrupt:
        print("greenloop: interrupted", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop_like_ctrl_c(received: list[int]) -> dict[int, _Handler]:
    """Make SIGTERM/SIGHUP act as SIGINT: inside `asyncio.run` that cancels the run's task, so every
    `finally` and `__aexit__` runs (Python's default for SIGTERM is to die without any of them, which
    would leave the run's container and the embedded model server behind). Returns the old handlers."""

    def handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio.Runner's handler, or Python's default_int_handler
            on_sigint(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous: dict[int, _Handler] = {}
    for sig in STOP_SIGNALS:
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: leave signals alone
            break
    return previous
