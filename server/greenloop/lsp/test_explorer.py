"""`greenloop/discoverTests` and `greenloop/runTestItems`: the Testing view's tests and their runs in the sandbox.

Both are plain async requests: a `$/cancelRequest` (the Testing view's Stop) cancels the handler, and the
sandbox it opened is closed on the way out (`open_sandbox_for`), so nothing is left behind. A run also
publishes the diagnostics of the tests it covered, so a failing test's item and its diagnostic agree.
"""

from __future__ import annotations

import asyncio

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from greenloop.agent import list_tests, run_test_items
from greenloop.errors import GreenloopError
from greenloop.lsp import protocol as p
from greenloop.lsp import test_payloads
from greenloop.lsp.loops import publish_failures
from greenloop.lsp.server import GreenloopServer
from greenloop_sandbox import TestReport


def register(server: GreenloopServer) -> None:
    server.feature(p.DISCOVER_TESTS)(discover_tests)
    server.feature(p.RUN_TEST_ITEMS)(run_items)


async def discover_tests(ls: GreenloopServer, params: p.DiscoverTestsParams | None) -> p.DiscoverTestsResult:
    settings = await ls.settings()
    root, overlays = ls.root, ls.overlays()
    try:
        collection = await list_tests(root, settings, overlays=overlays)
    except GreenloopError as exc:
        raise JsonRpcInternalError(f"the tests could not be listed: {exc}") from exc
    return await asyncio.to_thread(test_payloads.discovered, root, collection, lambda rel: ls.text_of(rel, overlays))


async def run_items(ls: GreenloopServer, params: p.RunTestItemsParams | None) -> p.TestResultsParams:
    test_ids = params.test_ids if params is not None else None
    if test_ids is not None and not test_ids:
        raise JsonRpcInvalidParams(f"{p.RUN_TEST_ITEMS}: testIds is empty; leave it out to run every test")
    settings = await ls.settings()
    root, overlays = ls.root, ls.overlays()
    try:
        run = await run_test_items(root, settings, test_ids, overlays=overlays)
    except GreenloopError as exc:
        raise JsonRpcInternalError(f"the tests could not run: {exc}") from exc
    await publish_failures(ls, list(run.report.failures), test_ids)
    return await asyncio.to_thread(
        test_payloads.results, root, run.report, lambda rel: ls.text_of(rel, overlays), scope=test_ids,
        missing=run.missing,
    )


async def announce(ls: GreenloopServer, report: TestReport, scope: list[str] | None) -> None:
    """`greenloop/testResults` after a run the Testing view did not start (the runTests command, a save)."""
    overlays = ls.overlays()
    payload = await asyncio.to_thread(
        test_payloads.results, ls.root, report, lambda rel: ls.text_of(rel, overlays), scope=scope
    )
    ls.protocol.notify(p.TEST_RESULTS, payload)
