"""Standard LSP features: lifecycle, configuration, save-triggered test runs, code actions, progress cancel."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from greenloop.lsp import actions
from greenloop.lsp.server import GreenloopServer

log = logging.getLogger(__name__)
SAVE_DEBOUNCE = 0.3  # seconds: a burst of saves (save all) runs the tests once


def register(server: GreenloopServer) -> None:
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(configuration_changed)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(saved)
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=False),
    )(code_action)
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(progress_cancelled)
    server.feature(types.SHUTDOWN)(shutdown)


async def initialized(ls: GreenloopServer, params: types.InitializedParams) -> None:
    await ls.pull_configuration()


async def configuration_changed(ls: GreenloopServer, params: types.DidChangeConfigurationParams) -> None:
    await ls.pull_configuration()


def saved(ls: GreenloopServer, params: types.DidSaveTextDocumentParams) -> None:
    """With `greenloop.runTestsOnSave`, run the tests (debounced; a newer save replaces a pending run)."""
    if not ls.editor.run_tests_on_save:
        return
    if ls.save_run is not None and not ls.save_run.done():
        ls.save_run.cancel()
    ls.save_run = ls.spawn(_run_after_save(ls))


async def _run_after_save(ls: GreenloopServer) -> None:
    from greenloop.lsp.commands import run_tests

    await asyncio.sleep(SAVE_DEBOUNCE)
    try:
        await run_tests(ls)
    except Exception as exc:  # a background run reports, it does not crash the server
        ls.log_line(f"test run after save failed: {exc}")


def code_action(ls: GreenloopServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    known = ls.diagnostics.in_file(params.text_document.uri)
    return actions.code_actions(params, known, any_failing=ls.diagnostics.failing)


def progress_cancelled(ls: GreenloopServer, params: types.WorkDoneProgressCancelParams) -> None:
    ls.loops.cancel_token(params.token)


async def shutdown(ls: GreenloopServer, params: Any) -> None:
    """Stop the loop and background work, waiting for their clean-up, before saying yes."""
    await ls.stop_everything()
