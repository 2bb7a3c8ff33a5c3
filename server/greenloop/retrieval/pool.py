"""Parsing many files in worker processes, each handed the next batch as soon as it is free.

A cold index runs `greenloop.retrieval.worker` children (see there for the
wire format). Files go out largest first in batches that shrink as the work
runs out, so the workers finish together even when one of them is slower
(another process on its core, a file that is slow to parse); while a worker
parses its next batch the caller unpickles the last one. A worker that fails
is logged and its batches are parsed in a thread instead.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import sys
from collections import deque
from collections.abc import Callable, Sequence

from greenloop.retrieval.languages import language_of
from greenloop.retrieval.model import FileSymbols
from greenloop.retrieval.worker import HEADER_BYTES, frame

log = logging.getLogger(__name__)
_SMALLEST_BATCH_BYTES = 200_000  # below this, the round trip costs more than the balance gains
_BATCHES_PER_WORKER = 2  # each batch is this fraction of a worker's share of what is left


_InThread = Callable[[Sequence[tuple[str, bytes]]], list[FileSymbols]]


async def parse_in_workers(items: Sequence[tuple[str, bytes]], workers: int, in_thread: _InThread) -> list[FileSymbols]:
    """The symbols of `items` (in their order), parsed by `workers` child processes.

    `in_thread` parses a batch in this process when a worker fails.
    """
    batches = batches_of(items, workers)
    pending = deque(range(len(batches)))
    results: list[list[FileSymbols]] = [[] for _ in batches]
    jobs = [_serve(items, batches, pending, results, in_thread) for _ in range(min(workers, len(batches)))]
    await asyncio.gather(*jobs)
    out: list[FileSymbols | None] = [None] * len(items)
    for batch, symbols in zip(batches, results, strict=True):
        for i, item in zip(batch, symbols, strict=True):
            out[i] = item
    return [s for s in out if s is not None]


def batches_of(items: Sequence[tuple[str, bytes]], workers: int) -> list[list[int]]:
    """Indexes of `items`, largest file first, cut into batches of shrinking byte size (guided scheduling)."""
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
    remaining = sum(len(data) for _, data in items)
    batches: list[list[int]] = []
    batch: list[int] = []
    size = 0
    target = max(remaining / (workers * _BATCHES_PER_WORKER), _SMALLEST_BATCH_BYTES)
    for i in order:
        batch.append(i)
        size += len(items[i][1])
        if size >= target:
            batches.append(batch)
            remaining -= size
            batch, size = [], 0
            target = max(remaining / (workers * _BATCHES_PER_WORKER), _SMALLEST_BATCH_BYTES)
    if batch:
        batches.append(batch)
    return batches


async def _serve(
    items: Sequence[tuple[str, bytes]],
    batches: list[list[int]],
    pending: deque[int],
    results: list[list[FileSymbols]],
    in_thread: _InThread,
) -> None:
    """Run one worker process until no batch is left; it is killed if we are cancelled."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "greenloop.retrieval.worker",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    errors = asyncio.create_task(process.stderr.read())
    stdin, stdout = process.stdin, process.stdout

    async def send(batch: int) -> None:
        named = [(path, language_of(path), data) for path, data in (items[i] for i in batches[batch])]
        stdin.write(frame(await asyncio.to_thread(pickle.dumps, named, pickle.HIGHEST_PROTOCOL)))
        await stdin.drain()

    owed: deque[int] = deque()  # batches sent to the worker, oldest first, whose symbols are not stored yet
    try:
        if pending:
            owed.append(pending.popleft())
            await send(owed[-1])
        while owed:
            size = int.from_bytes(await stdout.readexactly(HEADER_BYTES), "little")
            body = await stdout.readexactly(size)
            if pending:
                owed.append(pending.popleft())
                await send(owed[-1])  # the worker parses it while we unpickle the last one
            results[owed[0]] = await asyncio.to_thread(pickle.loads, body)
            owed.popleft()
        stdin.close()
        await process.wait()
    except (OSError, EOFError, asyncio.IncompleteReadError, pickle.UnpicklingError) as error:
        await _stop(process)
        detail = (await errors).decode(errors="replace")[-500:] or repr(error)
        log.warning("parsing worker failed (%s); parsing in a thread instead", detail)
        while owed or pending:
            batch = owed.popleft() if owed else pending.popleft()
            results[batch] = await asyncio.to_thread(in_thread, [items[i] for i in batches[batch]])
    finally:
        await _stop(process)
        errors.cancel()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill a worker that still runs; its unread output is read away first (or `wait` never returns)."""
    if process.returncode is None:
        process.kill()
    if process.stdout is not None:
        await process.stdout.read()
    await process.wait()
