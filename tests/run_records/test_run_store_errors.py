"""A corrupt or locked run store gives a clear RunStoreError, never a raw sqlite3 error."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from greenloop.errors import GreenloopError
from greenloop.run_records import RunStore, RunStoreError


def test_corrupt_file_is_reported_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    path.write_bytes(b"this is not a database, just some text " * 200)
    with pytest.raises(RunStoreError, match=r"not a usable greenloop database.*move it aside") as info:
        RunStore.open(path)
    assert isinstance(info.value, GreenloopError)
    assert path.read_bytes().startswith(b"this is not")  # the file is left as it was


def test_damaged_pages_after_open_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with RunStore.open(path) as store:
        store.start_run(
            "r", mode="fix", workspace="/w", config={}, seed=None, model="m", started_at=time.time()
        )
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # wreck the schema page, keep the header
    path.write_bytes(bytes(data))
    with pytest.raises(RunStoreError, match=r"runs\.sqlite3"):
        store = RunStore.open(path)
        store.list_runs()


def test_locked_store_times_out_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    store = RunStore.open(path, busy_timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(RunStoreError, match="locked by another process"):
            store.start_run("r", mode="fix", workspace="/w", config={}, seed=None, model="m", started_at=1.0)
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Once the other writer is gone the same store works again.
    store.start_run("r", mode="fix", workspace="/w", config={}, seed=None, model="m", started_at=1.0)
    assert [r.id for r in store.list_runs()] == ["r"]
    store.close()


def test_unwritable_location(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunStoreError, match="cannot open run store"):
        RunStore.open(blocker / "runs.sqlite3")


def test_bad_group_key(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "r.sqlite3") as store, pytest.raises(RunStoreError, match="cannot group"):
        store.stats(by=["colour"])
