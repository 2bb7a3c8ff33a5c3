"""A cell finished elsewhere, kept exactly once: a pending file, the run store merge, then the state line.

The driver writes what a remote cell sent back to `.bench/pending/` first (atomically), merges its run
records into the bench's run store (one transaction, runs already there skipped), appends the result
line, and only then removes the pending file. A driver killed at any point loses nothing: the next
start finishes the pending files before it plans cells, so no cell runs twice and no record is half in.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from greenloop.bench.state import BenchState, CellResult
from greenloop.run_records.bundle import Bundle, merge_bundle

PENDING = "pending"


def keep(state: BenchState, store: Path, result: CellResult, bundle: Bundle) -> None:
    """Persist a remote cell's result and run records, in the order that survives a crash anywhere."""
    folder = state.path.parent / PENDING
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (hashlib.sha256(result.key.encode()).hexdigest()[:24] + ".json")
    part = path.with_suffix(".part")
    with part.open("w", encoding="utf-8") as fh:
        json.dump({"result": asdict(result), "bundle": bundle}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    part.replace(path)
    _finish(state, store, path, result, bundle)


def recover(state: BenchState, store: Path) -> int:
    """Finish what a killed driver left pending; how many cells that kept."""
    folder = state.path.parent / PENDING
    kept = 0
    for part in folder.glob("*.part") if folder.is_dir() else []:
        part.unlink()  # cut off before it was renamed into place: the cell was not received
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            result = CellResult(**data["result"])
        except (ValueError, TypeError, KeyError):
            path.unlink()  # cannot be a finished write: those are renamed into place whole
            continue
        if state.done(result.key):
            path.unlink()
            continue
        _finish(state, store, path, result, data.get("bundle") or {})
        kept += 1
    return kept


def _finish(state: BenchState, store: Path, path: Path, result: CellResult, bundle: Bundle) -> None:
    merge_bundle(store, bundle)
    if not state.done(result.key):  # a cell delivered twice keeps one line
        state.add(result)
    path.unlink()
