"""The realbugs development set (benchmarks/data/realbugs, or $REALBUGS_DATA): cases, workspaces, hit rule, baselines.

A case's workspace is read straight from its tarball into memory (paths
relative to the workspace root). The hit rule and the two baselines (deepest
frame, Okapi BM25) are the set's README's.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tarfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from greenloop.retrieval.model import Definition

_INSIDE = Path(__file__).resolve().parent / "data" / "realbugs"  # the set in the repository (issue 39)
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "realbugs"  # the older 49-case set
# $REALBUGS_DATA picks a set folder; else the repository's, else the shared one
DATA = Path(os.environ.get("REALBUGS_DATA") or (_INSIDE if (_INSIDE / "cases.jsonl").is_file() else _SHARED))
_SUFFIXES = (".py", ".pyi", ".js", ".ts", ".rs", ".toml", ".cfg", ".ini", ".txt", ".md")


@dataclass(frozen=True)
class Truth:
    path: str
    symbol: str
    start: int
    end: int


@dataclass(frozen=True)
class Case:
    id: str
    project: str
    tests: tuple[str, ...]
    truth: tuple[Truth, ...]
    folder: Path

    @property
    def output(self) -> str:
        """The real failing pytest output."""
        return (self.folder / "failing_output.txt").read_text("utf-8", errors="replace")

    def files(self) -> dict[str, bytes]:
        """The buggy workspace's text files (the kinds a project index reads), by relative path."""
        out: dict[str, bytes] = {}
        with tarfile.open(self.folder / "workspace.tar.gz") as archive:
            for member in archive:
                if not member.isfile() or not member.name.endswith(_SUFFIXES):
                    continue
                relative = member.name.split("/", 1)[1] if "/" in member.name else member.name
                handle = archive.extractfile(member)
                if handle is not None:
                    out[relative] = handle.read()
        return out


def available(root: Path = DATA) -> bool:
    return (root / "cases.jsonl").is_file()


def load_cases(root: Path = DATA, ids: set[str] | None = None) -> list[Case]:
    cases = []
    for line in (root / "cases.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        if ids is not None and row["id"] not in ids:
            continue
        truth = tuple(Truth(t["path"], t["symbol"], t["start"], t["end"]) for t in row["truth"])
        cases.append(Case(row["id"], row["project"], tuple(row["tests"]), truth, root / "cases" / row["id"]))
    return cases


def hits(path: str, symbol: str, case: Case) -> bool:
    """The README's rule: same path, one dotted symbol a whole-component suffix of the other."""
    mine = symbol.split(".")
    for truth in case.truth:
        theirs = truth.symbol.split(".")
        shorter = min(len(mine), len(theirs))
        if path == truth.path and mine[-shorter:] == theirs[-shorter:]:
            return True
    return False


# ---- the README's two baselines ------------------------------------------------------------
_HEADER = re.compile(r"^_{3,} (\S.*?) _{3,}\s*$", re.M)
_BANNER = re.compile(r"^={3,} .* ={3,}\s*$", re.M)  # "=== warnings summary ===" ends the last section
_LOCATION = re.compile(r"(?P<path>[\w./-]+\.py):(?P<line>\d+)")
_WORDS = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])|\d+")
_TEST_FOLDERS = {"test", "tests", "testing"}


def is_test_file(path: str) -> bool:
    """The README's rule for a test file."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in _TEST_FOLDERS for p in parts[:-1])
        or name.startswith(("test_", "tests_"))
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def deepest_frame(output: str, definitions: list[Definition]) -> Definition | None:
    """Per failure section, the last `path:line` inside a def of a non-test file; the first section's."""
    by_path: dict[str, list[Definition]] = {}
    for definition in definitions:
        if definition.kind in ("function", "method"):
            by_path.setdefault(definition.path, []).append(definition)
    sections = [_BANNER.split(body, maxsplit=1)[0] for body in _HEADER.split(output)[2::2]]
    for section in sections:
        found = None
        for match in _LOCATION.finditer(section):
            path = _relative(match["path"], by_path)
            line = int(match["line"])
            inside = [d for d in by_path.get(path or "", ()) if d.start_line <= line <= d.end_line]
            if path and not is_test_file(path) and inside:
                found = max(inside, key=lambda d: d.start_line)  # innermost
        if found is not None:
            return found
    return None


def _relative(raw: str, by_path: dict[str, list[Definition]]) -> str | None:
    if raw in by_path:
        return raw
    return next((p for p in by_path if raw.endswith("/" + p)), None)


def tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


class OkapiBM25:
    """The README's BM25 (k1=1.5, b=0.75): defs of non-test files, query = distinct terms of the output."""

    def __init__(self, documents: list[tuple[Definition, list[str]]]) -> None:
        self.docs = [(d, Counter(words), len(words)) for d, words in documents]
        self.average = statistics.fmean(n for _, _, n in self.docs) if self.docs else 1.0
        frequency: Counter[str] = Counter()
        for _, counts, _ in self.docs:
            frequency.update(counts.keys())
        total = len(self.docs)
        self.idf = {w: math.log(1 + (total - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def top(self, query: str, k: int) -> list[Definition]:
        terms = set(tokens(query))
        scored = []
        for definition, counts, length in self.docs:
            score = 0.0
            for term in terms & counts.keys():
                tf = counts[term]
                score += self.idf[term] * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * length / self.average))
            scored.append((-score, definition.path, definition.start_line, definition))
        scored.sort(key=lambda item: item[:3])
        return [d for *_, d in scored[:k]]


def bm25_baseline(definitions: list[Definition], lines_of: dict[str, list[str]]) -> OkapiBM25:
    documents = []
    for d in definitions:
        if d.kind in ("function", "method") and not is_test_file(d.path):
            source = "\n".join(lines_of[d.path][d.start_line - 1 : d.end_line])
            documents.append((d, tokens(f"{d.path} {d.symbol} {source}")))
    return OkapiBM25(documents)
