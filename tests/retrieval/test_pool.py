"""Worker processes for a cold index: batches cover every file once, and a failed worker costs nothing but time."""

from __future__ import annotations

import pytest

from greenloop.retrieval import pool
from greenloop.retrieval.index import _extract_many
from greenloop.retrieval.tags import extract

FILES = [(f"pkg/m{i}.py", f"def f{i}(x):\n    return g(x) + {i}\n".encode() * (1 + i % 7)) for i in range(60)]


def test_batches_cover_every_file_once_largest_first_and_shrink() -> None:
    batches = pool.batches_of(FILES, 2)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(FILES)))
    sizes = [len(FILES[i][1]) for i in flat]
    assert sizes == sorted(sizes, reverse=True)
    big = [(p, d * 20_000) for p, d in FILES]  # ~40 MB: many batches
    totals = [sum(len(big[i][1]) for i in batch) for batch in pool.batches_of(big, 2)]
    assert len(totals) > 8 and totals[0] > 4 * totals[-2]


async def test_workers_give_what_the_thread_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "_SMALLEST_BATCH_BYTES", 1)  # many batches: each worker answers several
    assert len(pool.batches_of(FILES, 3)) > 10
    assert await pool.parse_in_workers(FILES, 3, _extract_many) == [extract(p, d) for p, d in FILES]


async def test_a_worker_that_fails_is_replaced_by_a_thread(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pool.sys, "executable", "/bin/false")
    symbols = await pool.parse_in_workers(FILES, 2, _extract_many)
    assert symbols == [extract(p, d) for p, d in FILES]
    assert "parsing worker failed" in caplog.text
