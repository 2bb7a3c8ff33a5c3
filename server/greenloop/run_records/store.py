"""RunStore: every run, its events, model calls and sandbox execs, in one SQLite file, written as it goes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from greenloop.errors import GreenloopError
from greenloop.run_records import export, schema
from greenloop.run_records.models import RunDetail, RunSummary, StatsRow, verdict_word
from greenloop.run_records.stats import GROUP_COLUMNS, build_rows

SKIPPED_EVENT_KINDS = frozenset({"diagnosis_delta"})
"""Streamed pieces are not stored: the whole text arrives in the event that follows them."""

_SECRET_KEYS = frozenset({"api_key"})


class RunStoreError(GreenloopError):
    """The run store cannot be read or written (corrupt, locked, unknown run); the message says what to do."""


def config_name(config: dict[str, Any]) -> str:
    """The step config's name: `config["runs"]["label"]`, else `config["name"]`, else "default"."""
    runs = config.get("runs")
    label = runs.get("label") if isinstance(runs, dict) else None
    name = label or config.get("name")
    return str(name) if name else "default"


def _scrub(value: Any) -> Any:
    """A copy of a config without secrets (api keys are never stored)."""
    if isinstance(value, dict):
        return {k: ("***" if k in _SECRET_KEYS and v else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


class RunStore:
    """One SQLite run store. Every write commits at once, so a crash keeps what happened so far.

    Safe to share between threads (one lock per store) and between processes
    (WAL mode, busy timeout). Every SQLite failure becomes a RunStoreError.
    """

    def __init__(
        self, path: Path, conn: sqlite3.Connection, busy_timeout: float = schema.BUSY_TIMEOUT
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, busy_timeout: float = schema.BUSY_TIMEOUT) -> RunStore:
        """Open or create the store (schema, WAL mode, busy timeout); RunStoreError when unusable."""
        path = Path(path).expanduser()
        try:
            conn = schema.connect(path, busy_timeout)
        except (sqlite3.Error, OSError) as exc:
            raise _store_error(path, exc, busy_timeout) from exc
        return cls(path, conn, busy_timeout)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; a write block is one transaction; sqlite errors -> RunStoreError."""
        with self._lock:
            try:
                if write:
                    self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if write and self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                if write:
                    self._conn.execute("COMMIT")
            except sqlite3.ProgrammingError as exc:
                raise RunStoreError(f"run store {self.path} is closed or misused: {exc}") from exc
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc, self.busy_timeout) from exc

    # -- writes (the agent calls these as the run goes) -------------------------------------------

    def start_run(
        self,
        run_id: str,
        *,
        mode: str,
        workspace: str,
        config: dict[str, Any],
        seed: int | None,
        model: str,
        started_at: float,
        config_label: str | None = None,
    ) -> None:
        """Record a run's start; `started_at` is wall-clock time (seconds since the epoch)."""
        clean = _scrub(config)
        name = config_label or config_name(clean)
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO runs (id, mode, workspace, config, config_name, seed, model, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET mode = excluded.mode,"
                " workspace = excluded.workspace, config = excluded.config, config_name = excluded.config_name,"
                " seed = excluded.seed, model = excluded.model, started_at = excluded.started_at",
                (run_id, mode, workspace, _dumps(clean), name, seed, model, started_at),
            )

    def add_event(self, run_id: str, event: dict[str, Any]) -> None:
        kind = str(event.get("kind", ""))
        if kind in SKIPPED_EVENT_KINDS:
            return
        iteration = event.get("iteration")
        with self._db(write=True) as db:
            self._ensure_run(db, run_id)
            db.execute(
                "INSERT INTO events (run_id, kind, at, iteration, data) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, float(event.get("at") or 0.0), iteration, _dumps(event)),
            )
            if kind == "iteration_started" and isinstance(iteration, int):
                db.execute("UPDATE runs SET current_iteration = ? WHERE id = ?", (iteration, run_id))

    def add_call(self, run_id: str, record: dict[str, Any]) -> None:
        with self._db(write=True) as db:
            self._ensure_run(db, run_id)
            iteration = record.get("iteration")
            if not isinstance(iteration, int):
                row = db.execute("SELECT current_iteration FROM runs WHERE id = ?", (run_id,)).fetchone()
                iteration = int(row[0])
            db.execute(
                "INSERT INTO calls (run_id, iteration, step, model, prompt_tokens, completion_tokens, cost,"
                " latency, outcome, started_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    iteration,
                    str(record.get("step") or ""),
                    str(record.get("model") or ""),
                    int(record.get("prompt_tokens") or 0),
                    int(record.get("completion_tokens") or 0),
                    float(record.get("cost") or 0.0),
                    float(record.get("latency") or 0.0),
                    str(record.get("outcome") or ""),
                    record.get("started_at"),
                    _dumps(record),
                ),
            )

    def add_exec(
        self, run_id: str, *, command: str, exit_code: int, duration: float, timed_out: bool
    ) -> None:
        with self._db(write=True) as db:
            self._ensure_run(db, run_id)
            db.execute(
                "INSERT INTO execs (run_id, iteration, command, exit_code, duration, timed_out, recorded_at)"
                " VALUES (?, (SELECT current_iteration FROM runs WHERE id = ?), ?, ?, ?, ?, ?)",
                (run_id, run_id, command, exit_code, duration, int(timed_out), time.time()),
            )

    def finish_run(
        self,
        run_id: str,
        *,
        outcome: str,
        iterations: int,
        prompt_tokens: int,
        completion_tokens: int,
        cost: float,
        seconds: float,
        summary: str,
    ) -> None:
        with self._db(write=True) as db:
            self._ensure_run(db, run_id)
            db.execute(
                "UPDATE runs SET outcome = ?, iterations = ?, prompt_tokens = ?, completion_tokens = ?,"
                " cost = ?, seconds = ?, summary = ?, finished_at = ? WHERE id = ?",
                (
                    outcome,
                    iterations,
                    prompt_tokens,
                    completion_tokens,
                    cost,
                    seconds,
                    summary,
                    time.time(),
                    run_id,
                ),
            )

    def set_verdict(
        self, run_id: str, *, ran: bool | None, works: bool | None, perfect: bool | None, note: str = ""
    ) -> None:
        with self._db(write=True) as db:
            full_id = self._resolve(db, run_id)
            db.execute(
                "UPDATE runs SET ran = ?, works = ?, perfect = ?, note = ?, verdict_at = ? WHERE id = ?",
                (_bool_int(ran), _bool_int(works), _bool_int(perfect), note, time.time(), full_id),
            )

    # -- reads ----------------------------------------------------------------------------------------

    def list_runs(self, limit: int = 20) -> list[RunSummary]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,))
            return [RunSummary(**_summary_fields(row)) for row in rows.fetchall()]

    def get_run(self, run_id: str) -> RunDetail:
        """The run whose id is `run_id` or starts with it (like git's short hashes)."""
        with self._db() as db:
            full_id = self._resolve(db, run_id)
            row = db.execute("SELECT * FROM runs WHERE id = ?", (full_id,)).fetchone()
            events = [
                json.loads(r[0])
                for r in db.execute("SELECT data FROM events WHERE run_id = ? ORDER BY seq", (full_id,))
            ]
            calls = [
                json.loads(r[0]) | {"iteration": r[1]}
                for r in db.execute(
                    "SELECT data, iteration FROM calls WHERE run_id = ? ORDER BY seq", (full_id,)
                )
            ]
            execs = [
                {k: r[k] for k in ("iteration", "command", "exit_code", "duration", "recorded_at")}
                | {"timed_out": bool(r["timed_out"])}
                for r in db.execute("SELECT * FROM execs WHERE run_id = ? ORDER BY seq", (full_id,))
            ]
        return RunDetail(
            **_summary_fields(row),
            workspace=row["workspace"],
            seed=row["seed"],
            config=json.loads(row["config"]),
            finished_at=row["finished_at"],
            ran=_int_bool(row["ran"]),
            works=_int_bool(row["works"]),
            perfect=_int_bool(row["perfect"]),
            note=row["note"],
            events=events,
            calls=calls,
            execs=execs,
        )

    def stats(self, by: Sequence[str] = ("model", "config")) -> list[StatsRow]:
        unknown = [key for key in by if key not in GROUP_COLUMNS]
        if unknown:
            raise RunStoreError(f"cannot group runs by {unknown}; choose from {sorted(GROUP_COLUMNS)}")
        with self._db() as db:
            runs = [dict(r) for r in db.execute("SELECT * FROM runs")]
            latencies: dict[str, list[float]] = {}
            for run_id, latency in db.execute("SELECT run_id, latency FROM calls"):
                latencies.setdefault(run_id, []).append(float(latency))
        return build_rows(runs, latencies, list(by))

    def export_pairs(self, out: Path, *, modes: Sequence[str] = ("fix", "improve")) -> int:
        """JSONL prompt/completion pairs of the model calls that made successful fixes; returns the count.

        Only green runs of the given modes, only the calls of the iteration that went green,
        only calls that produced a valid reply; exact duplicates are written once.
        """
        with self._db() as db:
            pairs = list(export.successful_pairs(db, modes))
        return export.write_jsonl(pairs, Path(out))

    # -- helpers --------------------------------------------------------------------------------------

    @staticmethod
    def _ensure_run(db: sqlite3.Connection, run_id: str) -> None:
        """A placeholder row, so events that arrive before start_run are kept."""
        db.execute("INSERT OR IGNORE INTO runs (id, started_at) VALUES (?, ?)", (run_id, time.time()))

    @staticmethod
    def _resolve(db: sqlite3.Connection, run_id: str) -> str:
        if db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            return run_id
        escaped = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = db.execute(
            "SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 5", (escaped + "%",)
        ).fetchall()
        if len(rows) == 1 and run_id:
            return str(rows[0][0])
        if not rows:
            raise RunStoreError(f"no run {run_id!r} in the run store; `greenloop runs list` shows the ids")
        raise RunStoreError(
            f"run id {run_id!r} is ambiguous ({', '.join(r[0] for r in rows)}, ...); give more of it"
        )


def _store_error(path: Path, exc: BaseException, busy_timeout: float) -> RunStoreError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return RunStoreError(
            f"run store {path} is locked by another process (waited {busy_timeout:g}s);"
            " try again when it finishes, or set runs.store to another file"
        )
    if isinstance(exc, OSError) or "unable to open" in text:
        return RunStoreError(
            f"cannot open run store {path} ({text}); check the folder exists and is writable"
        )
    return RunStoreError(
        f"run store {path} is not a usable greenloop database ({text}); move it aside"
        f" (e.g. `mv {path} {path}.bad`) and greenloop starts a new one"
    )


def _bool_int(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _int_bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _summary_fields(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "mode": row["mode"],
        "model": row["model"],
        "config_name": row["config_name"],
        "started_at": row["started_at"],
        "outcome": row["outcome"],
        "iterations": row["iterations"],
        "prompt_tokens": row["prompt_tokens"],
        "completion_tokens": row["completion_tokens"],
        "cost": row["cost"],
        "seconds": row["seconds"],
        "summary": row["summary"],
        "verdict": verdict_word(_int_bool(row["ran"]), _int_bool(row["works"]), _int_bool(row["perfect"])),
    }
