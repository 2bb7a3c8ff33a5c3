"""Reads bench output folders (read-only) into cells: each result with the rounds its run record kept, by rung.
(`Row` is what the tables count per rung or family over such cells.)

A bench folder holds `.bench/results.jsonl` (one row per cell: outcome, the kept change's `kind`, the
correctness verdict) and `.bench/runs.sqlite3` (each run's events). The events name no rung; a round is
told by its events (agent/repair/candidate_round.py, orchestration/candidate_strategy.py):
- `candidate_asked`/`candidate_tested` carry the round's form (`route`: "small_edits" for the small edits, "mutants" in older records) and,
  for a small edit, its kind (`change_kind`, a family of `loop.edits_off` or a refinement of one);
- `round_ended` carries the approach's `why`, which each rung module words its own way (`RUNG_OF_WHY`);
- a round that starts after a green candidate in the same run is the second look (second_look.py); its
  `round_ended` comes only when its green is kept, so a round is closed by its own event or by the next.
A round's seconds run from the event before its first to its last; a small edit's from asked to tested.
"""

from __future__ import annotations

import json
import sqlite3
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from greenloop.agent.events import route_name
from greenloop.agent.repair.edit_kinds import shape_and_family
from greenloop.agent.repair.rungs.small_edits import SmallEditsForm
from greenloop.bench.state import NOT_RUN, BenchState
from greenloop.settings import EditFamily

# families the ablation deleted (docs/decisions/2026-11-ablation.md): older records still name them
REMOVED: tuple[str, ...] = ("arguments swapped", "boolean everywhere", "unbound name", "boolean", "exception suppressed")
FAMILIES: tuple[str, ...] = (*typing.get_args(EditFamily), *REMOVED)
REFINED = {  # kinds edit_kinds.py tells apart within a family (`refined`); `loop.edits_off` names the family
    "loop bound changed": "term dropped",  # records before the shape named its family: `loop bound changed (arithmetic)`
    "none guard returning another type": "none guard",
    "none check skipping a statement": "none guard",
}
SMALL_EDITS, SECOND_LOOK = "small edits", "second look"
RUNG_OF_WHY = (  # the start of a round's `why` -> its rung (agent/repair/rungs/*.py), the longest first
    ("small edits of the function", SMALL_EDITS),
    ("the top-ranked function, sampled hotter", "hotter"),
    ("the top-ranked function, written anew", "anew"),
    ("the top-ranked functions together", "several"),
    ("the top-ranked function", "function"),
    ("the lines to change in the long top-ranked function", "region"),
    ("the next-ranked functions together", "next ranked"),
    ("the next-ranked function", "next function"),  # removed rung (decision ablation): older stores
    ("the whole file, once", "oneshot"),
    ("the whole file", "anew or file"),  # removed rung (decision ablation): older stores
    ("changes in several places", "blocks"),
    ("the code does not load", "broken file"),
    ("methods the tests read as attributes", "properties"),
    ("a module is not installed", "install"),
    ("the failing check", "checks"),
    ("the failing test", "checks"),
    ("the request sides with the code", "settle"),
)
CORRECT = ("same", "equivalent")


@dataclass
class Row:
    """What one rung or family did over a group of cells."""

    name: str
    ran: int = 0  # cells it ran in (of the cells with run records)
    kept: int = 0  # cells whose kept green change came from it
    correct: int = 0
    differs: int = 0
    unknown: int = 0  # judged unknown, or not judged
    moved: int = 0  # cells where a round of it moved the state (better or green)
    seconds: float = 0.0
    tested: int = 0
    green: int = 0

    def keep(self, verdict: str) -> None:
        self.kept += 1
        if verdict in CORRECT:
            self.correct += 1
        elif verdict == "differs":
            self.differs += 1
        else:
            self.unknown += 1


def family_of(kind: str) -> str:
    """The small-edit family of a change's kind; "" when the kind is no small edit ("model", "install", ...)."""
    shape, family = shape_and_family(kind)
    kind = family or REFINED.get(shape, shape)
    return kind if kind in FAMILIES else ""


def rung_of(why: str, route: str = "") -> str:
    """The rung a round's `why` (else its route) names; "?" and the words when none does."""
    for start, rung in RUNG_OF_WHY:
        if why.startswith(start):
            return rung
    if route == SmallEditsForm.route:
        return SMALL_EDITS
    return f"? {why or route}".strip()


@dataclass
class SmallEdit:
    """One small-edit candidate: its family, whether it was tested and green, and its seconds."""

    family: str
    tested: bool
    green: bool
    seconds: float
    index: int = 0  # its place in the round (from 1)


@dataclass
class Round:
    """One round of a run: its rung, what it tried and how it ended ("" when no `round_ended` closed it)."""

    rung: str
    route: str
    start: float
    end: float
    iteration: int
    second_look: bool = False
    why: str = ""
    ended: str = ""
    moved: bool = False
    best: int | None = None  # the index of the round's best candidate
    offered: int = 0  # candidates the round could have asked (`of`)
    asked: int = 0
    tested: int = 0
    green: int = 0
    edits: list[SmallEdit] = field(default_factory=list)
    _asked_at: dict[int, float] = field(default_factory=dict, repr=False)

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def moved_family(self) -> str:
        """The family of the small edit the state moved to ("" when none moved it)."""
        if not self.moved or self.best is None:
            return ""
        return next((e.family for e in self.edits if e.index == self.best), "")

    @property
    def cut(self) -> bool:
        """A small-edits round that stopped before its last edit without a green (its time limit)."""
        return self.route == SmallEditsForm.route and self.asked < self.offered and not self.green


@dataclass
class Cell:
    """One task under one config: its result, its verdict and (when the run record is there) its rounds."""

    source: str
    suite: str
    config: str
    task: str
    run_id: str
    outcome: str
    kind: str
    verdict: str  # same | equivalent | differs | unknown; "" when not judged
    seconds: float
    rounds: list[Round] | None = None  # None: no run record

    @property
    def kept_family(self) -> str:
        return family_of(self.kind) if self.outcome == "green" else ""

    @property
    def kept_rung(self) -> str:
        """The rung whose round gave the kept change; "" when the cell is not green or nothing says."""
        if self.outcome != "green":
            return ""
        if self.kept_family or self.kind == "small edit":
            return SMALL_EDITS
        greens = [r for r in self.rounds or [] if r.ended == "green" and r.rung != SMALL_EDITS]
        return greens[-1].rung if greens else ""


def read_folder(folder: Path, suite: str = "") -> list[Cell]:
    """The counted cells of a bench --out folder, with their rounds when the run store holds them."""
    if not (folder / ".bench").is_dir():
        raise FileNotFoundError(f"{folder}: no .bench folder (not a bench --out folder)")
    state = BenchState(folder / ".bench")  # no results.jsonl yet: a bench whose first cell is running
    suite = suite or _suite_of_report(folder / "report.json")
    rows = [r for r in state.results.values() if r.counted]
    events = _events(folder / ".bench" / "runs.sqlite3", [r.run_id for r in rows if r.run_id])
    cells = []
    for r in rows:
        verdict = (r.extra.get("verdict") or {}).get("name", "")
        run = events.get(r.run_id)
        cells.append(Cell(str(folder), suite or _suite_of_row(r.extra), r.config, r.task, r.run_id, r.outcome,
                          str(r.extra.get("kind") or ""), verdict, r.seconds,
                          rounds_of(run) if run is not None else None))
    return cells


def read_report(path: Path) -> list[Cell]:
    """The counted cells of a stored report.json (no run records: rounds unknown)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{path}: not a bench report (no 'results' list)")
    suite = str((data.get("meta") or {}).get("suite") or "")
    cells = []
    for r in data["results"]:
        if r.get("outcome") in NOT_RUN:
            continue
        extra = r.get("extra") or {}
        cells.append(Cell(str(path), suite or _suite_of_row(extra), r["config"], r["task"], r.get("run_id", ""),
                          r["outcome"], str(extra.get("kind") or ""), (extra.get("verdict") or {}).get("name", ""),
                          float(r.get("seconds") or 0.0)))
    return cells


def rounds_of(events: Iterable[dict[str, Any]]) -> list[Round]:
    """A run's rounds, in order, from its events (each a dict with `kind`, `at` and the event's fields)."""
    rounds: list[Round] = []
    current: Round | None = None
    before = 0.0  # the time of the event before this one
    for ev in events:
        kind, at = ev.get("kind"), float(ev.get("at") or 0.0)
        if kind in ("candidate_asked", "candidate_tested"):
            index, route = int(ev.get("index") or 0), route_name(str(ev.get("route") or ""))
            if current is None or current.ended or route != current.route or (
                    kind == "candidate_asked" and index <= max(current._asked_at, default=0)):
                current = _opened(rounds, route, before, int(ev.get("iteration") or 0))
            current.end = at
            if kind == "candidate_asked":
                current._asked_at[index] = at
                current.asked += 1
                current.offered = max(current.offered, int(ev.get("of") or 0))
            else:
                _tested(current, ev, index, at - current._asked_at.get(index, before))
        elif kind == "round_ended":
            if current is None or current.ended:  # a round that asked nothing
                current = _opened(rounds, "", before, int(ev.get("iteration") or 0))
            current.why, current.ended, current.moved = str(ev.get("why") or ""), str(ev.get("ended") or ""), \
                bool(ev.get("moved"))
            current.best = ev.get("best") if isinstance(ev.get("best"), int) else None
            current.end = at
        before = at
    _name_rungs(rounds)
    return rounds


def _opened(rounds: list[Round], route: str, start: float, iteration: int) -> Round:
    opened = Round("", route, start, start, iteration, second_look=any(r.green for r in rounds))
    rounds.append(opened)
    return opened


def _tested(round_: Round, ev: dict[str, Any], index: int, seconds: float) -> None:
    tested, green = ev.get("status") == "tested", bool(ev.get("green"))
    round_.tested += tested
    round_.green += green
    if round_.route == SmallEditsForm.route:
        kind = str(ev.get("change_kind") or "")
        round_.edits.append(SmallEdit(family_of(kind) or f"? {kind}", tested, green, max(0.0, seconds), index))


def _name_rungs(rounds: list[Round]) -> None:
    """Each round's rung: the second look, else by its own `why`, else by the next `why` in its iteration
    (a green round whose second look ran is told after it, with the same approach)."""
    for i, r in enumerate(rounds):
        why = r.why or next((later.why for later in rounds[i + 1:] if later.iteration == r.iteration and later.why), "")
        r.rung = SECOND_LOOK if r.second_look and r.route != SmallEditsForm.route else rung_of(why, r.route)


def _events(store: Path, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each run's events in order, read from the run store without writing to it (a running bench's too)."""
    if not store.is_file() or not run_ids:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    db = sqlite3.connect(_read_only_uri(store), uri=True)
    try:
        for chunk in _chunks(run_ids, 500):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT run_id, data FROM events WHERE run_id IN ({marks}) ORDER BY run_id, seq"
            for run_id, data in db.execute(query, chunk):
                out.setdefault(run_id, []).append(json.loads(data))
    finally:
        db.close()
    return out


def _read_only_uri(store: Path) -> str:
    """A URI that reads the store and writes nothing beside it. A store no bench has open (no `-wal` file) is
    read as immutable: SQLite would otherwise leave a `-wal` and `-shm` file in the bench's folder. A
    running bench's store is read as any reader of a WAL database does (its `-wal` holds the newest events)."""
    live = store.with_name(store.name + "-wal").exists()
    return f"{store.resolve().as_uri()}?{'mode=ro' if live else 'immutable=1'}"


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _suite_of_report(path: Path) -> str:
    try:
        return str(json.loads(path.read_text(encoding="utf-8")).get("meta", {}).get("suite") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def _suite_of_row(extra: dict[str, Any]) -> str:
    """A realbugs cell names its project (bench/realbugs_run.py); "" when nothing says the suite."""
    return "realbugs" if "project" in extra else ""
