"""bench_locate's BM25 is the realbugs set's build.py's: on realbugs cases as baselines.json says, on HumanEvalFix too.

baselines.json is written by the set's build.py (`--baselines-only`); bench_locate reported another
BM25 for a while (its own tokenizer and defs: 44 top-1 where build.py has 56). It now calls build.py's
functions through benchmarks/realbugs.py, and this checks the result case by case: the rank of the
first hit, the top 3 and the deepest frame's hit. The cases' folders are committed, with the failing
output baselines.json was computed on. The old BM25 ranked them otherwise: youtube-dl-28 1 (now 2),
youtube-dl-30 4 (2), tqdm-2 2 (4), PySnooper-3 7 (6), youtube-dl-3 166 (114; there the decorators
and the def universe move the rank too, not only the tokenizer).

HumanEvalFix packed (bench_locate's suite 2) had a BM25 class of its own until it ranked with
build.py's too; there the check is against build.py run on the packed repo as written to disk
(`workspace_defs`, as `--baselines-only` reads a workspace), on one task's real pytest failure
(has_close_elements: the old class ranked it 4th, build.py's BM25 1st).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.bench.scripts import script

from greenloop.retrieval import RepoIndex

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "realbugs"
SAMPLE = ["youtube-dl-3", "youtube-dl-28", "youtube-dl-30", "tqdm-2", "PySnooper-3"]


def _baselines() -> dict[str, dict]:
    return {row["id"]: row for row in json.loads((DATA / "baselines.json").read_text())["per_case"]}


@pytest.mark.parametrize("case_id", SAMPLE)
async def test_bench_locate_baselines_are_baselines_json(case_id: str) -> None:
    realbugs, bench_locate = script("realbugs"), script("bench_locate")
    [case] = realbugs.load_cases(DATA, ids={case_id})
    expected = _baselines()[case_id]
    files = case.files()

    ranking = realbugs.bm25_ranking(files, case.output)
    rank = next((i + 1 for i, (path, symbol) in enumerate(ranking) if realbugs.hits(path, symbol, case)), None)
    assert rank == expected["bm25_rank"]
    assert [list(item) for item in ranking[:3]] == expected["bm25_top3"]

    index = RepoIndex(workers=1)
    await index.update(files)
    hits = bench_locate.baseline_hits(case, files, index.definitions())
    assert hits["BM25"] == [expected["bm25_rank"] == place for place in (1, 2, 3)]
    assert hits["deepest frame"] == [expected["frame_hit"]]


def test_bench_locate_humanevalfix_bm25_is_build_py(tmp_path: Path) -> None:
    realbugs, bench_locate = script("realbugs"), script("bench_locate")
    hef = sys.modules["humanevalfix_repo"]  # the packer bench_locate imports
    tasks = hef.write_repo(tmp_path)
    task = tasks[0]
    assert task.entry_point == "has_close_elements"
    [(_, failure)] = hef.split_failures(hef.run_pytest(tmp_path, "-k", task.test_name))
    files = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*.py")}

    ranking = bench_locate.bm25_ranking(files, failure)
    assert ranking == realbugs.build.bm25_rank(failure, *realbugs.build.workspace_defs(tmp_path))
    assert {path for path, _ in ranking} == {t.module for t in tasks}  # the documents: every task's defs
