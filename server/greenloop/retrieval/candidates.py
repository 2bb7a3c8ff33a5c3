"""The evidence one set of failures leaves: each candidate's signal values with notes, and the test code kept as spec."""

from __future__ import annotations

from dataclasses import dataclass, field

from greenloop.retrieval.evidence import Specificity, is_test_definition
from greenloop.retrieval.index import is_test_path
from greenloop.retrieval.model import Definition, Location

_CONTAINER_KINDS = ("class", "impl", "interface", "module")


@dataclass
class Candidate:
    definition: Definition | None  # None: a line range (frame outside any definition)
    path: str
    start: int
    end: int
    values: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    peaks: dict[str, float] = field(default_factory=dict)  # best value in any one failure

    def offer(self, signal: str, value: float, note: str) -> None:
        if value > self.values.get(signal, 0.0):
            self.values[signal] = value
            self.notes[signal] = note


@dataclass
class Evidence:
    candidates: dict[str, Candidate] = field(default_factory=dict)
    spec: dict[str, Location] = field(default_factory=dict)  # test code (role "spec"), first reason kept
    specificity: Specificity | None = None
    in_traceback: dict[str, int] = field(default_factory=dict)  # definition key -> failures whose traceback ran it
    failures: int = 0
    missing_name: int = 0  # failures that stopped in test code on a name the code does not have yet
    modules: dict[str, tuple[float, str]] = field(default_factory=dict)  # path -> its `module` value, note

    def offer(self, definition: Definition, signal: str, value: float, note: str) -> None:
        if is_test_definition(definition):
            self.add_spec(definition, note)
            return
        candidate = self.candidates.get(definition.key)
        if candidate is None:
            candidate = Candidate(definition, definition.path, definition.start_line, definition.end_line)
            self.candidates[definition.key] = candidate
        candidate.offer(signal, value, note)

    def add_spec(self, definition: Definition, note: str) -> None:
        if definition.kind in _CONTAINER_KINDS and any(
            s.path == definition.path and definition.start_line <= s.start_line <= definition.end_line
            for s in self.spec.values()
        ):
            return  # a Rust `mod tests` or a test class: its failing test is already there
        self.spec.setdefault(definition.key, Location(
            definition.path, definition.symbol, definition.kind, definition.start_line, definition.end_line,
            0.0, note, role="spec",
        ))

    def offer_lines(self, path: str, start: int, end: int, signal: str, value: float, note: str) -> None:
        key = f"{path}:{start}-{end}"
        if is_test_path(path):
            self.spec.setdefault(key, Location(path, key, "lines", start, end, 0.0, note, role="spec"))
            return
        candidate = self.candidates.setdefault(key, Candidate(None, path, start, end))
        candidate.offer(signal, value, note)
