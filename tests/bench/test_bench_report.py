"""Report numbers (Wilson interval, pass rate by iteration) and step config files."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.bench import CellResult, load_config, load_configs, summarize, wilson_interval
from greenloop.bench.configs import apply_config
from greenloop.bench.report import report_markdown
from greenloop.bench.suites import repo_root
from greenloop.errors import GreenloopError
from greenloop.settings import Settings


@pytest.mark.parametrize(
    ("passed", "total", "low", "high"),
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (81, 100, 0.7222, 0.8749)],
)
def test_wilson_interval_matches_published_values(passed: int, total: int, low: float, high: float) -> None:
    got = wilson_interval(passed, total)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_of_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 0.0)


def _result(config: str, task: str, outcome: str, iterations: int, tokens: int = 100) -> CellResult:
    return CellResult(
        key=f"{config}|{task}",
        config=config,
        task=task,
        repeat=0,
        seed=1,
        model="m",
        outcome=outcome,
        iterations=iterations,
        prompt_tokens=tokens,
        cost=0.01,
        seconds=2.0,
    )


def test_summaries_per_config() -> None:
    results = [
        _result("a", "t1", "green", 1),
        _result("a", "t2", "green", 3),
        _result("a", "t3", "budget", 3),
        _result("a", "t4", "error", 0),
        _result("b", "t1", "green", 2, tokens=300),
    ]
    a, b = summarize(results, ["a", "b"], max_iterations=3)
    assert (a.runs, a.passed, a.errors) == (4, 2, 1)
    assert a.pass_rate == 0.5
    assert a.pass_by_iteration == [0.0, 0.25, 0.25, 0.5]
    assert a.mean_iterations == pytest.approx(7 / 4)
    assert a.outcomes == {"green": 2, "budget": 1, "error": 1}
    assert (b.pass_rate, b.mean_tokens, b.pass_by_iteration) == (1.0, 300.0, [0.0, 0.0, 1.0, 1.0])
    meta = {
        "suite": "s",
        "tasks": 4,
        "repeat": 1,
        "model": "m",
        "sandbox": "local",
        "jobs": 1,
        "max_iterations": 3,
        "seed": 1,
        "suite_file": "f",
        "finished": "now",
        "version": "0",
        "command": "greenloop bench",
        "skipped_rows": ["line 9: bad"],
        "notes": [],
    }
    md = report_markdown(meta, [a, b], "plot.png")
    assert "| a | 4 | 50.0% | 15.0% – 85.0% | baseline |" in md
    assert "| b | 1 | 100.0% |" in md and "+50.0 pp" in md
    assert "![pass rate by iteration](plot.png)" in md and "line 9: bad" in md


def test_shipped_configs_load_and_change_what_they_say() -> None:
    folder = repo_root() / "benchmarks" / "configs"
    configs = {c.name: c for c in load_configs(sorted(folder.glob("*.toml")))}
    assert {"plain", "no-diagnosis", "whole-files", "no-history", "rewrite"} <= set(configs)
    base = Settings()
    assert apply_config(base, configs["plain"]) == base
    assert apply_config(base, configs["no-diagnosis"]).loop.diagnosis is False
    assert apply_config(base, configs["whole-files"]).retrieval.enabled is False
    assert apply_config(base, configs["no-history"]).loop.history is False
    assert base.loop.rewrite_lines == 0 < apply_config(base, configs["rewrite"]).loop.rewrite_lines
    assert configs["plain"].digest != configs["no-history"].digest


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[loop]\ndiagnosys = false\n", "unknown setting.*loop.diagnosys"),
        ("[loop\n", "not valid TOML"),
        ("[loop]\nmax_iterations = 0\n", "invalid setting"),
        ("colour = 1\n", "unknown setting.*colour"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(GreenloopError, match=message):
        load_config(path)


def test_two_configs_with_one_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "same.toml").write_text("")
    with pytest.raises(GreenloopError, match="share the name"):
        load_configs([tmp_path / "a" / "same.toml", tmp_path / "b" / "same.toml"])
    assert [c.name for c in load_configs([])] == ["default"]


def test_time_to_green_is_reported_beside_the_fix_rate() -> None:
    seconds = [30.0, 10.0, 20.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    results = []
    for i, s in enumerate(seconds):
        row = _result("a", f"t{i}", "green", 1)
        row.seconds, row.extra = s, {"candidates": 6}
        results.append(row)
    red = _result("a", "red", "budget", 3)
    red.seconds, red.extra = 600.0, {"candidates": 30}
    (a,) = summarize([*results, red], ["a"], max_iterations=3)
    assert a.median_seconds_to_green == 55.0 and a.p90_seconds_to_green == 90.0  # the red run is no time to green
    assert a.candidates_per_minute == pytest.approx(90 / (1150 / 60))
    (none,) = summarize([red], ["a"], max_iterations=3)
    assert none.median_seconds_to_green is None and none.p90_seconds_to_green is None
    meta = {"suite": "s", "tasks": 11, "repeat": 1, "model": "m", "sandbox": "docker", "jobs": 1, "max_iterations": 3,
            "seed": 1, "suite_file": "f", "finished": "now", "version": "0", "command": "greenloop bench"}
    md = report_markdown(meta, [a, none], None)
    assert "| a | 10/11 | 55.0 | 90.0 | 4.7 |" in md and "| a | 0/1 | - | - | 3.0 |" in md


def test_seconds_charged_for_memo_served_replies_are_said() -> None:
    served = _result("b", "t", "green", 1)
    served.extra = {"served_seconds": 42.5}
    asked = _result("a", "t", "green", 1)
    a, b = summarize([asked, served], ["a", "b"], max_iterations=3)
    assert (a.served_seconds, b.served_seconds) == (0.0, 42.5)
    meta = {"suite": "s", "tasks": 1, "repeat": 1, "model": "m", "sandbox": "docker", "jobs": 1, "max_iterations": 3,
            "seed": 1, "suite_file": "f", "finished": "now", "version": "0", "command": "greenloop bench"}
    assert "recorded (b 42 s)" in report_markdown(meta, [a, b], None)
    assert "memo" not in report_markdown(meta, [a], None)

def test_greens_offered_as_done_leave_out_the_plausible_ones_and_an_unknown_one_done_counts_as_wrong() -> None:
    def green(task: str, verdict: str, risky: bool) -> CellResult:
        result = _result("a", task, "green", 1)
        result.extra = {"verdict": {"name": verdict}, "kind": "statement dropped" if risky else "model",
                        "risky": risky}
        return result

    results = [green("t1", "same", False), green("t2", "equivalent", False), green("t3", "differs", True),
               green("t4", "unknown", True), green("t5", "differs", False), _result("a", "t6", "budget", 3),
               green("t7", "unknown", False)]
    (a,) = summarize(results, ["a"], max_iterations=3)
    assert (a.passed, a.correct, a.done, a.done_correct, a.done_wrong) == (6, 2, 4, 2, 2)
    meta = {"suite": "s", "tasks": 6, "repeat": 1, "model": "m", "sandbox": "docker", "jobs": 1, "max_iterations": 3,
            "seed": 1, "suite_file": "f", "finished": "now", "version": "0", "command": "greenloop bench"}
    table = report_markdown(meta, [a], None)
    assert "| a | 6 | 2 (33% of green) |" in table and "| 4 | 2 (50%) | 2 |" in table
    assert "| correct of those | wrong offered as done |" in table
