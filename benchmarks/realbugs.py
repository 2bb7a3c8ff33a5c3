"""Loads the realbugs development set (../shared/data/realbugs): cases, workspaces, hit rule.

A case's workspace is read straight from its tarball into memory (paths
relative to the workspace root); the hit rule is the set's README's: same path,
and one dotted symbol a suffix of the other on whole components.
"""

from __future__ import annotations

import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "realbugs"
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
