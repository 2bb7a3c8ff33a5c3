"""`greenloop improve`: a person's instruction drives the edit; the tests must still pass after it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from greenloop.agent import FixRequest, Focus, improve
from greenloop.agent.changes.paths import safe_relpath
from greenloop.cli.common import settings_from_args
from greenloop.cli.fix import add_result_flags, drive, resolve_workspace
from greenloop.errors import GreenloopError


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("improve", parents=[common], help="change code as instructed, tests kept green")
    p.add_argument("instruction", help='what should change, e.g. "count_words should ignore blank lines"')
    p.add_argument("workspace", nargs="?", default=".", type=Path, help="project folder (default: .)")
    p.add_argument("--file", help="the file the instruction is about (workspace-relative)")
    p.add_argument("--lines", help="the lines it is about, A-B (1-based, inclusive); needs --file")
    add_result_flags(p)
    p.set_defaults(func=run)


def parse_focus(workspace: Path, file: str | None, lines: str | None) -> Focus | None:
    if lines and not file:
        raise GreenloopError("--lines needs --file")
    if not file:
        return None
    path = safe_relpath(workspace, file)
    if not (workspace / path).is_file():
        raise GreenloopError(f"{file} is not a file in {workspace}")
    if not lines:
        count = len((workspace / path).read_text(encoding="utf-8", errors="replace").splitlines())
        return Focus(path=path, start_line=1, end_line=max(1, count))
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", lines)
    if not match:
        raise GreenloopError(f"--lines {lines!r}: write a range like 12-30")
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < start:
        raise GreenloopError(f"--lines {lines!r}: the range must be A-B with 1 <= A <= B")
    return Focus(path=path, start_line=start, end_line=end)


def run(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args.workspace)
    settings = settings_from_args(args, workspace)
    request = FixRequest(
        workspace=workspace, instruction=args.instruction, focus=parse_focus(workspace, args.file, args.lines)
    )
    return drive(lambda: improve(request, settings), args, settings, workspace)
