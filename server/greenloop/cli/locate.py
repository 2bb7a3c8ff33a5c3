"""`greenloop locate [WORKSPACE] (--test-output FILE | --run)`: the code a test failure is about."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from greenloop.agent.ports import choose_template, open_sandbox_for, read_workspace
from greenloop.cli.common import settings_from_args
from greenloop.errors import GreenloopError
from greenloop.retrieval import Location, RepoIndex, locate, pack_code
from greenloop.settings import Settings
from greenloop_sandbox import Spectrum, TestFailure


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "locate", parents=[common], help="rank the code a failing test is about", description=__doc__
    )
    p.add_argument("workspace", nargs="?", type=Path, default=Path("."), help="project folder (default: .)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--test-output", type=Path, metavar="FILE", help="saved test-runner output ('-': stdin)")
    source.add_argument("--run", action="store_true", help="run the tests in the sandbox first")
    p.add_argument("--template", help="python | node | rust, with --run (default: detected)")
    p.add_argument("--top", type=int, metavar="K", help="how many locations (default: retrieval.top_k)")
    p.add_argument("--json", action="store_true", help="print the locations as a JSON list")
    p.add_argument("--context", action="store_true", help="also print the assembled prompt context")
    p.add_argument("--coverage", action=argparse.BooleanOptionalAction, default=None,
                   help="with --run: run the failing tests under coverage too (default: retrieval.coverage)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    workspace = args.workspace.expanduser().resolve()
    if not workspace.is_dir():
        raise GreenloopError(f"{workspace}: not a folder; pass the project the failure is from.")
    settings = settings_from_args(args, workspace)
    top_k = args.top if args.top is not None else settings.retrieval.top_k
    if top_k < 1:
        raise GreenloopError("--top must be at least 1.")
    files = read_workspace(workspace)
    for note in files.skipped:
        print(f"[locate] skipped {note}", file=sys.stderr)
    failures: list[TestFailure] | str
    spectrum: Spectrum | None = None
    coverage = settings.retrieval.coverage if args.coverage is None else args.coverage
    if args.run:
        failures, spectrum = asyncio.run(_run_tests(settings, args.template, files, workspace, coverage))
        if not failures:
            print("[locate] all tests pass: nothing to locate", file=sys.stderr)
            if args.json:
                print("[]")
            return 0
    else:
        failures = _read_output(args.test_output)
    locations, context = asyncio.run(_locate(files, failures, top_k, settings if args.context else None, spectrum))
    if args.json:
        print(json.dumps([loc.to_json() for loc in locations], indent=2))
    else:
        _print_table(locations, workspace)
    if context is not None:
        print(context, file=sys.stderr if args.json else sys.stdout)
    return 0


def _read_output(path: Path) -> str:
    try:
        if str(path) == "-":
            return sys.stdin.read()
        return path.expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GreenloopError(f"{path}: cannot read the test output ({exc.strerror}).") from exc


async def _run_tests(
    settings: Settings, template: str | None, files: dict[str, bytes], workspace: Path, coverage: bool
) -> tuple[list[TestFailure] | str, Spectrum | None]:
    """The failures of a test run (and, with `coverage`, the failing tests' coverage spectrum)."""
    spectrum = None
    chosen = choose_template(settings, files, template)
    async with open_sandbox_for(settings, chosen, label="locate", workspace=workspace) as sandbox:
        await sandbox.sync(files)
        report = await sandbox.run_tests()
        print(f"[locate] {report.summary()}", file=sys.stderr)
        if coverage and report.failures:
            ids = list(dict.fromkeys(f.test_id for f in report.failures))
            spectrum = await sandbox.run_spectrum(ids, seconds=settings.retrieval.coverage_seconds)
            print(f"[locate] coverage: {len(spectrum.failing)} failing and {len(spectrum.passing)} passing tests "
                  f"in {spectrum.seconds:.1f}s{'; ' + spectrum.note if spectrum.note else ''}", file=sys.stderr)
    if report.green:
        return [], None
    return list(report.failures) or report.raw, spectrum


async def _locate(
    files: dict[str, bytes], failures: list[TestFailure] | str, top_k: int, settings: Settings | None,
    spectrum: Spectrum | None = None,
) -> tuple[list[Location], str | None]:
    index = RepoIndex()
    await index.update(files)
    for path, note in index.notes.items():
        print(f"[locate] {path}: {note}", file=sys.stderr)
    locations = await locate(index, failures, top_k=top_k, spectrum=spectrum)
    if settings is None:
        return locations, None
    pack = pack_code(
        index,
        locations,
        budget_tokens=settings.retrieval.context_tokens,
        failures=failures if isinstance(failures, list) else (),
    )
    return locations, f"{pack.text}\n[{pack.tokens} tokens]"


def _print_table(locations: list[Location], workspace: Path) -> None:
    console = Console()
    if not locations:
        console.print("No code locations found: the output names no workspace file or test.")
        return
    table = Table(title=f"Code locations for the failure in {workspace.name}")
    for column in ("#", "score", "location", "symbol", "kind", "why"):
        table.add_column(column, justify="right" if column in ("#", "score") else "left")
    for rank, loc in enumerate(locations, 1):
        where = f"{loc.path}:{loc.start_line}-{loc.end_line}"
        table.add_row(str(rank), f"{loc.score:.2f}", where, loc.symbol, loc.kind, loc.why)
    console.print(table)
