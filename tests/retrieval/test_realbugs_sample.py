"""Five real bugs from realbugs (four projects, plus a nested def): the truth must rank in the top 3.

The set lives in the repository (`benchmarks/data/realbugs`); the whole set is measured by
benchmarks/bench_locate.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from greenloop.retrieval import RepoIndex, locate

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "realbugs"
SAMPLE = ["youtube-dl-3", "youtube-dl-7", "tqdm-1", "cookiecutter-4", "PySnooper-3"]



def _realbugs() -> ModuleType:
    name = "realbugs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "realbugs.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@pytest.mark.parametrize("case_id", SAMPLE)
async def test_truth_in_top_three(case_id: str) -> None:
    realbugs = _realbugs()
    [case] = realbugs.load_cases(DATA, ids={case_id})
    index = RepoIndex()
    await index.update(case.files())
    found = await locate(index, case.output, top_k=3)
    assert any(realbugs.hits(loc.path, loc.symbol, case) for loc in found), [loc.symbol for loc in found]
    assert all(not realbugs.is_test_file(loc.path) for loc in found)
