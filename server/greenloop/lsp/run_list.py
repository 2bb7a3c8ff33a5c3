"""`greenloop/runs`: the latest recorded runs of the workspace, for the extension's history view."""

from __future__ import annotations

import asyncio

from pygls.exceptions import JsonRpcInvalidParams

from greenloop.errors import GreenloopError
from greenloop.lsp import protocol as p
from greenloop.lsp.server import GreenloopServer
from greenloop.settings import Settings

MAX_LIMIT = 500


def register(server: GreenloopServer) -> None:
    server.feature(p.RUNS)(list_runs)


async def list_runs(ls: GreenloopServer, params: p.RunsParams | None) -> p.RunsResult:
    limit = params.limit if params is not None else 20
    if not 1 <= limit <= MAX_LIMIT:
        raise JsonRpcInvalidParams(f"{p.RUNS}: limit must be between 1 and {MAX_LIMIT}, got {limit}")
    settings = await ls.settings()
    try:
        return await asyncio.to_thread(_read, settings, ls, limit)
    except GreenloopError as exc:
        raise JsonRpcInvalidParams(f"{p.RUNS}: {exc}") from exc


def _read(settings: Settings, ls: GreenloopServer, limit: int) -> p.RunsResult:
    from greenloop.run_records import RunStore, store_path

    path = store_path(settings, ls.root)
    if not path.is_file():
        return p.RunsResult(runs=[])
    store = RunStore.open(path)
    try:
        rows = store.list_runs(limit)
    finally:
        store.close()
    return p.RunsResult(
        runs=[
            p.RunSummary(
                id=r.id,
                mode=r.mode,
                outcome=r.outcome,
                started_at=r.started_at,
                iterations=r.iterations,
                cost=r.cost,
            )
            for r in rows
        ]
    )
