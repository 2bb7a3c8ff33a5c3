"""A bench's finished cells, appended to a JSONL file as each one ends, so an interrupted bench resumes."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "results.jsonl"
# Outcomes of a task that never reached the loop (its red state did not reproduce, or its environment
# could not be made): reported with their reasons, not counted in a config's runs.
NOT_RUN = ("not_reproduced", "skipped")


@dataclass
class CellResult:
    """One task run once under one config."""

    key: str
    config: str
    task: str
    repeat: int
    seed: int | None
    model: str
    outcome: str  # a Done outcome, or "error" when the run raised
    iterations: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0  # wall time seen by the bench
    run_id: str = ""
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    node: str = ""  # the Ray node that ran it (with --cluster); "" on this machine
    commit: str = ""  # the commit of the code that ran it ("unknown" outside a git checkout; "" recorded before this)
    dirty: bool | None = None  # whether that code had changes the commit does not hold (None: unknown)

    @property
    def counted(self) -> bool:
        """Whether this result is one of the runs a pass rate counts."""
        return self.outcome not in NOT_RUN

    @property
    def passed(self) -> bool:
        return self.outcome == "green"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def cell_key(config: str, digest: str, model: str, task: str, repeat: int) -> str:
    return f"{config}@{digest}|{model}|{task}|{repeat}"


class BenchState:
    """Results so far (read back on start) plus an append-only writer."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / STATE_FILE
        self.results: dict[str, CellResult] = {}
        self.unreadable = 0
        self._newline_first = False
        if self.path.exists():
            self._read()
            self._newline_first = not self.path.read_bytes().endswith(b"\n") and self.path.stat().st_size > 0

    def _read(self) -> None:
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                result = CellResult(**json.loads(line))
            except (ValueError, TypeError):
                self.unreadable += 1  # e.g. the last line of a bench killed mid-write
                continue
            self.results[result.key] = result

    def done(self, key: str, *, retry_errors: bool = False) -> bool:
        result = self.results.get(key)
        return result is not None and not (retry_errors and result.outcome == "error")

    def add(self, result: CellResult) -> None:
        """Keep and persist one result at once (a crash after this loses nothing)."""
        self.results[result.key] = result
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            if self._newline_first:  # a line cut off by a crash stays on its own line
                fh.write("\n")
                self._newline_first = False
            fh.write(json.dumps(asdict(result)) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
