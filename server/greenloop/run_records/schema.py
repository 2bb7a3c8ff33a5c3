"""The run store's SQLite schema and how a connection to it is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA_VERSION = 1

BUSY_TIMEOUT = 5.0
"""Seconds a write waits for another writer before the store reports it as locked."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    mode TEXT NOT NULL DEFAULT '',
    workspace TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL DEFAULT '{}',
    config_name TEXT NOT NULL DEFAULT 'default',
    seed INTEGER,
    model TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL DEFAULT 0,
    finished_at REAL,
    outcome TEXT,
    iterations INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    seconds REAL,
    summary TEXT NOT NULL DEFAULT '',
    ran INTEGER,
    works INTEGER,
    perfect INTEGER,
    note TEXT NOT NULL DEFAULT '',
    verdict_at REAL,
    current_iteration INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    at REAL NOT NULL DEFAULT 0,
    iteration INTEGER,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_run ON events (run_id, seq);
CREATE TABLE IF NOT EXISTS calls (
    run_id TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    iteration INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    latency REAL NOT NULL DEFAULT 0,
    outcome TEXT NOT NULL DEFAULT '',
    started_at REAL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_run ON calls (run_id, seq);
CREATE TABLE IF NOT EXISTS execs (
    run_id TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    iteration INTEGER NOT NULL DEFAULT 0,
    command TEXT NOT NULL,
    exit_code INTEGER NOT NULL,
    duration REAL NOT NULL,
    timed_out INTEGER NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS execs_run ON execs (run_id, seq);
"""


def connect(path: Path, busy_timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """Open (and create) the database at `path` in WAL mode with a busy timeout.

    Raises sqlite3 errors as they come; the caller turns them into RunStoreError.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        version = _schema_version(conn)
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version} is newer than this greenloop knows ({SCHEMA_VERSION})"
            )
        if version < SCHEMA_VERSION:
            conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
    except BaseException:
        conn.close()
        raise
    return conn


def _schema_version(conn: sqlite3.Connection) -> int:
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0
