"""Whole runs moved between run stores: read out of one SQLite file, merged into another in one transaction.

A bench cell on another machine records into a store of its own; the driver merges the finished runs into
the bench's store. A merge is all or nothing, and a run already there (same id) is skipped, so merging
the same bundle twice (a driver that died between merge and bookkeeping) adds nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from greenloop.run_records import schema
from greenloop.run_records.store import _store_error

Bundle = dict[str, list[dict[str, Any]]]
TABLES = ("runs", "events", "calls", "execs")  # children carry run_id; their seq is renumbered by the target


def read_bundle(path: Path) -> Bundle:
    """Every finished run in the store at `path` with its events, calls and execs (unfinished runs left out)."""
    try:
        conn = schema.connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(path, exc, schema.BUSY_TIMEOUT) from exc
    try:
        finished = [dict(r) for r in conn.execute("SELECT * FROM runs WHERE finished_at IS NOT NULL ORDER BY started_at")]
        ids = [r["id"] for r in finished]
        bundle: Bundle = {"runs": finished}
        marks = ",".join("?" * len(ids))
        for table in TABLES[1:]:
            rows = conn.execute(f"SELECT * FROM {table} WHERE run_id IN ({marks}) ORDER BY seq", ids) if ids else []
            bundle[table] = [{k: v for k, v in dict(r).items() if k != "seq"} for r in rows]
        return bundle
    finally:
        conn.close()


def merge_bundle(path: Path, bundle: Bundle) -> int:
    """Add the bundle's runs that `path`'s store lacks, all in one transaction; how many were added."""
    try:
        conn = schema.connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(path, exc, schema.BUSY_TIMEOUT) from exc
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            have = {r[0] for r in conn.execute("SELECT id FROM runs")}
            new = {r["id"] for r in bundle.get("runs", []) if r["id"] not in have}
            for table in TABLES:
                key = "id" if table == "runs" else "run_id"
                known = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")} - {"seq"}
                for row in bundle.get(table, []):
                    if row[key] in new:
                        names = [k for k in row if k in known]  # column names from our schema only
                        conn.execute(f"INSERT INTO {table} ({','.join(names)}) VALUES ({','.join('?' * len(names))})",
                                     [row[k] for k in names])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(new)
    except sqlite3.Error as exc:
        raise _store_error(path, exc, schema.BUSY_TIMEOUT) from exc
    finally:
        conn.close()
