"""`greenloop serve`: the LSP daemon on stdio (`--tcp HOST:PORT` for debugging)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from greenloop.errors import GreenloopError


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="run the language server (the editor starts it)",
                       description=__doc__)  # fmt: skip
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)")
    p.add_argument("--log-file", help="write the server's log here (default: stderr)")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.set_defaults(func=run)


def _apply_flags_to_env(args: argparse.Namespace) -> None:
    """Shared flags become environment settings, so every run the server starts sees them."""
    from greenloop.cli.common import overrides_from_args

    for section, values in overrides_from_args(args).items():
        for key, value in values.items():
            os.environ[f"GREENLOOP_{section.upper()}__{key.upper()}"] = str(value)


def parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise GreenloopError(f"--tcp wants HOST:PORT (e.g. 127.0.0.1:2087), got {value!r}")
    return host, int(port)


def run(args: argparse.Namespace) -> int:
    from greenloop.lsp import create_server

    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        handlers=[handler], level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    _apply_flags_to_env(args)
    server = create_server()
    if args.tcp:
        host, port = parse_tcp(args.tcp)
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0
