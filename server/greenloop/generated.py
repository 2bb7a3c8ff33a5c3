"""The command line every generated file shares: write it, print it (`--stdout`), or check it is current."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def generated_file_main(
    argv: list[str] | None, *, prog: str, description: str | None, default: Path, render: Callable[[], str],
    stale: str,
) -> int:
    """`render()` written to `--out` (default `default`); `--check` exits 1 with `stale` when it differs."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--out", type=Path, default=default, help=f"where to write (default {default})")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    parser.add_argument("--stdout", action="store_true", help="print the file instead")
    args = parser.parse_args(argv)
    text = render()
    if args.stdout:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} {stale}", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0
