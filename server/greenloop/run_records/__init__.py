"""Run records: where the run store lives, and the API the agent and front ends call."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from greenloop.errors import GreenloopError
from greenloop.run_records.models import VERDICTS, RunDetail, RunSummary, StatsRow, verdict_word
from greenloop.run_records.store import RunStore, RunStoreError, config_name
from greenloop.settings import Settings

__all__ = [
    "VERDICTS",
    "RunDetail",
    "RunStore",
    "RunStoreError",
    "RunSummary",
    "StatsRow",
    "config_name",
    "record_verdict",
    "store_path",
    "verdict_word",
]

STORE_FILE = "runs.sqlite3"


def store_path(settings: Settings, workspace: Path | None) -> Path:
    """`settings.runs.store` (relative to the workspace), else `<workspace>/.greenloop/runs.sqlite3`,
    else `runs.sqlite3` in the user data dir."""
    if settings.runs.store:
        path = Path(settings.runs.store).expanduser()
        if not path.is_absolute() and workspace is not None:
            path = workspace / path
        return path
    if workspace is not None:
        return workspace / ".greenloop" / STORE_FILE
    return Path(platformdirs.user_data_dir("greenloop")) / STORE_FILE


def record_verdict(settings: Settings, workspace: Path | None, run_id: str, verdict: str) -> None:
    """Store a person's answer ("perfect", "works", "runs", "failed"; "skip" stores nothing)."""
    if verdict == "skip":
        return
    if verdict not in VERDICTS:
        raise GreenloopError(f"unknown verdict {verdict!r}; use one of {', '.join([*VERDICTS, 'skip'])}")
    ran, works, perfect = VERDICTS[verdict]
    store = RunStore.open(store_path(settings, workspace))
    try:
        store.set_verdict(run_id, ran=ran, works=works, perfect=perfect)
    finally:
        store.close()
