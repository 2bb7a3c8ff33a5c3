"""Prompt/completion pairs of successful fixes, as JSONL without exact duplicates."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

GOOD_CALL_OUTCOMES = ("ok", "repaired")


def successful_pairs(db: sqlite3.Connection, modes: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The calls of each green run's last iteration that has calls, as pair dicts, oldest run first."""
    marks = ",".join("?" for _ in modes)
    runs = db.execute(
        f"SELECT id, mode FROM runs WHERE outcome = 'green' AND mode IN ({marks}) ORDER BY started_at, id",
        tuple(modes),
    ).fetchall()
    good = ",".join("?" for _ in GOOD_CALL_OUTCOMES)
    for run_id, mode in runs:
        rows = db.execute(
            f"SELECT data FROM calls WHERE run_id = ? AND outcome IN ({good}) AND iteration ="
            " (SELECT MAX(iteration) FROM calls WHERE run_id = ?) ORDER BY seq",
            (run_id, *GOOD_CALL_OUTCOMES, run_id),
        ).fetchall()
        for (data,) in rows:
            pair = _pair(json.loads(data), run_id, mode)
            if pair is not None:
                yield pair


def _pair(record: dict[str, Any], run_id: str, mode: str) -> dict[str, Any] | None:
    messages = record.get("messages")
    reply = record.get("reply")
    if not isinstance(messages, list) or not messages or not isinstance(reply, str) or not reply:
        return None
    prompt = [{"role": str(m.get("role", "")), "content": str(m.get("content", ""))} for m in messages]
    meta = {"run_id": run_id, "mode": mode, "step": record.get("step"), "model": record.get("model")}
    return {"prompt": prompt, "completion": reply, "meta": meta}


def write_jsonl(pairs: Iterable[dict[str, Any]], out: Path) -> int:
    """Write pairs whose (prompt, completion) was not seen before; atomic (temp file + rename)."""
    seen: set[str] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for pair in pairs:
                key = json.dumps([pair["prompt"], pair["completion"]], sort_keys=True, ensure_ascii=False)
                if key in seen:
                    continue
                seen.add(key)
                fh.write(json.dumps(pair, ensure_ascii=False) + "\n")
                count += 1
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
