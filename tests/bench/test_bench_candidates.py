"""What the bench adds for candidate rounds: a seeded subset, per-config task limits, pass@k and tests edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.bench.cell_outcome import cell_extra
from greenloop.bench.configs import load_config
from greenloop.bench.report import summarize
from greenloop.bench.runner import BenchOptions, plan_cells
from greenloop.bench.state import CellResult
from greenloop.bench.suites import load_suite
from greenloop.errors import GreenloopError
from greenloop.settings import Settings


def test_a_sample_is_fixed_by_its_seed_and_keeps_the_files_order() -> None:
    a = [t.id for t in load_suite("humanevalfix", sample=10, sample_seed=3).tasks]
    b = [t.id for t in load_suite("humanevalfix", sample=10, sample_seed=3).tasks]
    c = [t.id for t in load_suite("humanevalfix", sample=10, sample_seed=4).tasks]
    everything = [t.id for t in load_suite("humanevalfix").tasks]
    assert a == b and a != c and len(a) == 10
    assert a == sorted(a, key=everything.index)
    assert [t.id for t in load_suite("humanevalfix", sample=10, sample_seed=3, limit=4).tasks] == a[:4]


def test_a_config_can_run_on_the_first_tasks_only(tmp_path: Path) -> None:
    slow = tmp_path / "slow.toml"
    slow.write_text('[loop]\nstrategy = "plan"\n\n[bench]\ntasks = 2\n')
    fast = tmp_path / "fast.toml"
    fast.write_text("[loop]\ncandidates = 2\n")
    configs = [load_config(fast), load_config(slow)]
    options = BenchOptions(suite="humanevalfix", out_dir=tmp_path / "out", configs=configs)
    cells = plan_cells(load_suite("humanevalfix", limit=5), options, Settings())
    assert sum(c.config.name == "fast" for c in cells) == 5 and sum(c.config.name == "slow" for c in cells) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[bench]\ntasks = 0\n")
    with pytest.raises(GreenloopError, match="tasks must be a positive"):
        load_config(bad)


def test_pass_at_k_counts_tested_candidates_and_test_edits_are_summed() -> None:
    assert cell_extra([False, False, True, True], ["calc.py", "tests/test_calc.py"]) == {
        "candidates": 4, "first_green": 3, "tests_edited": 1}
    rows = [
        CellResult(key=str(i), config="c", task=str(i), repeat=0, seed=1, model="m", outcome=outcome,
                   seconds=60.0, extra=cell_extra(greens, []))
        for i, (outcome, greens) in enumerate([("green", [True]), ("green", [False, False, True]),
                                               ("budget", [False] * 4), ("error", [])])
    ]
    [summary] = summarize(rows, ["c"], max_iterations=3)
    assert summary.pass_at_k == [0.25, 0.25, 0.5]
    assert summary.median_candidates == 2.0 and summary.tests_edited == 0
    assert summary.fixes_per_minute == pytest.approx(0.5)
