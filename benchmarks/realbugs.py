"""The realbugs development set (benchmarks/data/realbugs, or $REALBUGS_DATA): cases, workspaces, hit rule, baselines.

A case's workspace is read straight from its tarball into memory (paths
relative to the workspace root). The hit rule and the two baselines (deepest
frame, Okapi BM25) are the set's README's; BM25 and the test-file rule are the
set's build.py's own functions (the ones that wrote baselines.json), loaded
from the file, so the bench and the set cannot disagree on them.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import sys
import tarfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from greenloop.retrieval.model import Definition

_INSIDE = Path(__file__).resolve().parent / "data" / "realbugs"  # the set in the repository (issue 39)
# $REALBUGS_DATA picks a set folder; else the repository's
DATA = Path(os.environ.get("REALBUGS_DATA") or _INSIDE)
_SUFFIXES = (".py", ".pyi", ".js", ".ts", ".rs", ".toml", ".cfg", ".ini", ".txt", ".md")


def _load_build() -> ModuleType:
    """The set's build script (benchmarks/data/realbugs/build.py), loaded by path: it stays runnable on its own."""
    name = "realbugs_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _INSIDE / "build.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


build = _load_build()


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


def is_test_file(path: str) -> bool:
    """The README's rule for a test file (build.py's `is_test_path`)."""
    return bool(build.is_test_path(path))


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


def _text(data: bytes) -> str:
    """A file's text as build.py reads it (`Path.read_text(encoding="utf-8", errors="replace")`: universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()


def bm25_documents(files: dict[str, bytes]) -> tuple[list[Any], dict[str, list[str]]]:
    """The README's BM25 documents: build.py's `source_defs` of the workspace's .py files (defs of non-test
    files, and their lines)."""
    sources = {path: _text(data) for path, data in sorted(files.items()) if path.endswith(".py")}
    with warnings.catch_warnings():  # the projects' own invalid escapes ("\d" in a str), as `ast.parse` meets them
        warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
        return build.source_defs(sources)


def bm25_rank(documents: tuple[list[Any], dict[str, list[str]]], output: str) -> list[tuple[str, str]]:
    """build.py's `bm25_rank` over `documents` for the failing output: every def (path, dotted symbol), best first."""
    defs, lines = documents
    return [(path, symbol) for path, symbol in build.bm25_rank(output, defs, lines)] if defs else []


def bm25_ranking(files: dict[str, bytes], output: str) -> list[tuple[str, str]]:
    """The README's BM25 on one workspace and its failing output (`bm25_documents`, then `bm25_rank`)."""
    return bm25_rank(bm25_documents(files), output)
