"""realbugs' build.py: SHA256SUMS after a partial build keeps the sums of the cases that are not on disk."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.bench.scripts import script

ROOT = Path(__file__).resolve().parents[2]


def _sum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_partial_build_keeps_the_sums_of_cases_not_on_disk(tmp_path: Path) -> None:
    # before the fix, the sums were written from the files on disk only: a `--only` build of 14 cases
    # dropped the lines of the 101 cases built elsewhere, and listed cases/.gitignore
    rows = [{"id": "a-1", "project": "a"}, {"id": "a-2", "project": "a"}, {"id": "gone-1", "project": "a"}]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    (tmp_path / "drops.jsonl").write_text("")
    (tmp_path / "cases" / "a-1").mkdir(parents=True)
    (tmp_path / "cases" / "a-1" / "fix.patch").write_bytes(b"new patch\n")
    (tmp_path / "cases" / ".gitignore").write_text("/a-2/\n")
    (tmp_path / "SHA256SUMS").write_text(
        f"{_sum(b'x')}  cases.jsonl\n{_sum(b'old patch')}  cases/a-1/fix.patch\n"
        f"{'2' * 64}  cases/a-2/workspace.tar.gz\n{'3' * 64}  cases/gone-1/workspace.tar.gz\n")

    script("realbugs_build", ROOT / "benchmarks" / "data" / "realbugs" / "build.py").write_sums(tmp_path)

    lines = (tmp_path / "SHA256SUMS").read_text().splitlines()
    assert lines == [
        f"{_sum((tmp_path / 'cases.jsonl').read_bytes())}  cases.jsonl",
        f"{_sum(b'')}  drops.jsonl",
        f"{_sum(b'new patch' + bytes([10]))}  cases/a-1/fix.patch",  # rebuilt: its new sum
        f"{'2' * 64}  cases/a-2/workspace.tar.gz",  # not on disk, still a case: kept
    ]  # gone-1 is no case any more, and .gitignore is no case file
