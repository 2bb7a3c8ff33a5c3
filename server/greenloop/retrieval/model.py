"""The records retrieval works with: definitions, frames and ranked locations."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

# Kinds a `Definition` (and so a `Location`) can have. "lines" is a plain line
# range: a frame in a file of an unknown language, or in module-level code.
KINDS = ("function", "method", "class", "interface", "impl", "module", "type", "macro", "lines")



def definition_key(path: str, symbol: str, start_line: int) -> str:
    """A definition's key, for `Definition` and for the `Location` made from it."""
    return f"{path}::{symbol}@{start_line}"

@dataclass(frozen=True)
class Definition:
    """One function, method, class (or similar) in one file."""

    path: str
    name: str
    symbol: str  # qualified with ".", e.g. "Stack.push" (Rust: "Counter.incr", "tests.it_works")
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    signature: str  # the header up to the body, whitespace collapsed
    refs: tuple[str, ...] = ()  # names referenced in its own body (not in nested definitions)
    parent: str | None = None  # symbol of the enclosing definition
    calls: tuple[str, ...] = ()  # the subset of `refs` that its body calls
    writes: tuple[str, ...] = ()  # attributes its own body assigns, "receiver.name" ("self.x", "o.y" for setattr(o, "y", v))

    @cached_property
    def key(self) -> str:
        """Unique within an index: path, qualified name and first line."""
        return definition_key(self.path, self.symbol, self.start_line)

    def contains(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


@dataclass(frozen=True)
class FileSymbols:
    """What one file defines and references; cached by content hash."""

    path: str
    language: str | None  # None: no grammar for it (line ranges only)
    line_count: int
    definitions: tuple[Definition, ...] = ()
    module_refs: tuple[str, ...] = ()  # names referenced outside any definition
    imports: tuple[str, ...] = ()  # name parts of the modules it imports ("hef", "t061", "utils")
    has_errors: bool = False  # the parse produced error nodes (still indexed)
    note: str = ""  # why the file was skipped or degraded, for the user


@dataclass(frozen=True)
class Signal:
    """One piece of evidence for a location: its value in [0, 1], what it added to the score, and why."""

    name: str
    value: float
    contribution: float
    note: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "contribution": self.contribution, "note": self.note}


@dataclass(frozen=True)
class Location:
    """A ranked piece of code a failure is about; `to_json` is a public contract.

    `role` is "target" (code to change) or "spec" (test code: what the target
    must satisfy, shown read-only); a location the prompt's code does not show is
    "callee" (a def the top one calls that a failing test ran, related.py), "path" (a def on
    the way from the failing test's calls down that a failing test ran, related.py) or
    "ranked" (ranked, but past the packing's budget); `signals` say why it ranks where it does.
    """

    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    score: float
    why: str
    role: str = "target"
    signals: tuple[Signal, ...] = ()

    @property
    def key(self) -> str:
        """The key of the definition it is (`Definition.key`)."""
        return definition_key(self.path, self.symbol, self.start_line)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "symbol": self.symbol,
            "kind": self.kind,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 6),
            "why": self.why,
            "role": self.role,
            "signals": [s.to_json() for s in self.signals],
        }


@dataclass
class Frame:
    """One stack frame inside the workspace: workspace-relative path, 1-based line."""

    path: str
    line: int
    function: str | None = None


@dataclass
class CodePack:
    """The code packed for a prompt: its text, its size in tokens and what it shows."""

    text: str
    tokens: int
    locations: list[Location] = field(default_factory=list)  # shown, whole or as an excerpt
    excerpts: list[Location] = field(default_factory=list)  # those of `locations` shown as an excerpt
