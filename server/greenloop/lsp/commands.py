"""`workspace/executeCommand` handlers: runTests, fixFailingTests, improve, generateProject, cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from greenloop.agent import FixRequest, Focus, fix, improve
from greenloop.errors import GreenloopError
from greenloop.lsp import protocol as p
from greenloop.lsp import wire
from greenloop.lsp.loops import RunResult, publish_failures
from greenloop.lsp.server import GreenloopServer
from greenloop.lsp.test_explorer import announce
from greenloop_sandbox.report import TestReport


def register(server: GreenloopServer) -> None:
    server.command(p.CMD_RUN_TESTS)(run_tests_command)
    server.command(p.CMD_FIX)(fix_command)
    server.command(p.CMD_IMPROVE)(improve_command)
    server.command(p.CMD_GENERATE)(generate_command)
    server.command(p.CMD_CANCEL)(cancel_command)


async def run_tests(ls: GreenloopServer, test_ids: list[str] | None = None) -> TestReport:
    """Run the tests (unsaved buffers included) and publish a diagnostic per failing test."""
    from greenloop.agent import run_tests as agent_run_tests

    settings = await ls.settings()
    try:
        report = await agent_run_tests(ls.root, settings, overlays=ls.overlays(), test_ids=test_ids)
    except GreenloopError as exc:
        raise JsonRpcInternalError(f"the tests could not run: {exc}") from exc
    await publish_failures(ls, list(report.failures), test_ids)
    await announce(ls, report, test_ids)
    return report


async def run_tests_command(ls: GreenloopServer, *args: Any) -> Any:
    wire.parse_command_args(p.RunTestsArgs, p.CMD_RUN_TESTS, args)
    report = await run_tests(ls)
    return wire.to_json(p.RunTestsResult(report.passed, report.failed, report.errors, report.skipped))


async def fix_command(ls: GreenloopServer, *args: Any) -> Any:
    parsed = wire.parse_command_args(p.FixArgs, p.CMD_FIX, args)
    if parsed.test_ids is not None and not parsed.test_ids:
        raise JsonRpcInvalidParams(f"{p.CMD_FIX}: testIds is empty; leave it out to fix all failing tests")
    listing = ls.interpreter  # read once: a listing sent while this run goes is for the next one
    request = FixRequest(workspace=ls.root, overlays=ls.overlays(), test_ids=parsed.test_ids,
                         interpreter=listing.packages, interpreter_note=listing.note)
    title = "greenloop: fixing failing tests"
    result = await ls.loops.run("fix", title, lambda settings: fix(request, settings), scope=parsed.test_ids)
    return wire.to_json(_loop_result(result))


async def improve_command(ls: GreenloopServer, *args: Any) -> Any:
    parsed = wire.parse_command_args(p.ImproveArgs, p.CMD_IMPROVE, args)
    if not parsed.instruction.strip():
        raise JsonRpcInvalidParams(f"{p.CMD_IMPROVE}: instruction is empty; say what should change")
    request = improve_request(
        ls, parsed.uri, parsed.range.start.line, parsed.range.end.line, parsed.instruction
    )
    result = await ls.loops.run(
        "improve", "greenloop: improving", lambda settings: improve(request, settings)
    )
    return wire.to_json(_loop_result(result))


def improve_request(ls: GreenloopServer, uri: str, first: int, last: int, instruction: str) -> FixRequest:
    """An improve request on lines first..last (0-based, LSP) of a workspace file that exists."""
    rel = ls.rel_path(uri)
    overlays = ls.overlays()
    if rel not in overlays and not (ls.root / rel).is_file():
        raise JsonRpcInvalidParams(f"{uri}: no such file (open it or save it first)")
    focus = Focus(path=rel, start_line=first + 1, end_line=max(first, last) + 1)
    listing = ls.interpreter
    return FixRequest(workspace=ls.root, overlays=overlays, instruction=instruction, focus=focus,
                      interpreter=listing.packages, interpreter_note=listing.note)


async def generate_command(ls: GreenloopServer, *args: Any) -> Any:
    from greenloop.agent.generate import GenerateRequest, generate

    parsed = wire.parse_command_args(p.GenerateArgs, p.CMD_GENERATE, args)
    out_dir = Path(parsed.out_dir)
    if not out_dir.is_absolute():
        raise JsonRpcInvalidParams(
            f"{p.CMD_GENERATE}: outDir must be an absolute path, got {parsed.out_dir!r}"
        )
    if await asyncio.to_thread(_non_empty_dir, out_dir):
        raise JsonRpcInvalidParams(f"{p.CMD_GENERATE}: {out_dir} is not empty; choose an empty or new folder")
    request = GenerateRequest(
        prompt=parsed.prompt, out_dir=out_dir, template=parsed.template, small_steps=bool(parsed.small_steps)
    )
    result = await ls.loops.run(
        "generate",
        "greenloop: generating a project",
        lambda settings: generate(request, settings),
        offer=False,
        need_root=False,
        store_in=out_dir,
    )
    files = [change.path for change in result.done.changes.files] if result.done else []
    return wire.to_json(p.GenerateResult(result.run_id, result.outcome, result.summary, str(out_dir), files))


def _non_empty_dir(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


async def cancel_command(ls: GreenloopServer, *args: Any) -> Any:
    wire.parse_command_args(p.CancelArgs, p.CMD_CANCEL, args)
    return wire.to_json(p.CancelResult(cancelled=ls.loops.cancel()))


def _loop_result(result: RunResult) -> p.LoopResult:
    return p.LoopResult(
        run_id=result.run_id, outcome=result.outcome, summary=result.summary, applied=result.applied
    )
