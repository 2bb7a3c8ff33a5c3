"""The realbugs suite end to end on a tiny realbugs-shaped set: real Docker sandbox, real HTTP to a scripted model.

Three cases in the set's format (cases.jsonl + cases/<id>/workspace.tar.gz): the model fixes the
first, cannot fix the second, and the third's tests already pass (not red: "not reproduced", not
counted). The report must say 1 of 2 fixed, no test file edited, and the third not run.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from greenloop.bench import BenchOptions, load_configs, run_bench, write_reports
from greenloop.bench.realbugs import TEST_TOOLS, expected_error
from greenloop.bench.realbugs_run import not_red
from greenloop.bench.runner import state_dir
from greenloop.bench.suites import load_suite
from greenloop.run_records import RunStore
from greenloop.settings import Settings
from greenloop_sandbox import TestFailure, TestReport

SUB = "def add(a, b):\n    return a - b\n"
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_other():\n    assert 1\n"
MUL = "def mul(a, b):\n    return a + b\n"
MUL_TEST = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
CASES = {  # id -> (files, the failing tests named by the case)
    "tiny-1": ({"calc.py": SUB, "tests/test_calc.py": ADD_TEST}, ["tests/test_calc.py::test_add"]),
    "tiny-2": ({"calc.py": MUL, "tests/test_calc.py": MUL_TEST}, ["tests/test_calc.py::test_mul"]),
    "tiny-3": ({"calc.py": SUB.replace("-", "+"), "tests/test_calc.py": ADD_TEST}, ["tests/test_calc.py::test_add"]),
}


def make_set(root: Path) -> Path:
    """The realbugs layout with the CASES; returns cases.jsonl."""
    rows = []
    for case_id, (files, tests) in CASES.items():
        folder = root / "cases" / case_id
        folder.mkdir(parents=True)
        with tarfile.open(folder / "workspace.tar.gz", "w:gz") as tar:
            for rel, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"{case_id}/{rel}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        if case_id == "tiny-1":  # the developers' fix, for the green's correctness verdict
            (folder / "fix.patch").write_text("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
                                              "-    return a - b\n+    return a + b\n")
        if case_id == "tiny-2":  # the real output names the exception the sandbox's run must show too
            (folder / "failing_output.txt").write_text("E       AssertionError: assert 5 == 6\n")
        rows.append({"id": case_id, "project": "tiny" if case_id != "tiny-2" else "other", "tests": tests,
                     "requirements": [], "truth": [], "python": "3.11"})
    rows.append({"id": "tiny-9", "project": "tiny", "tests": ["t.py::test"], "requirements": []})  # no tarball
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "cases.jsonl"


def oracle(request: dict[str, Any]) -> str:
    """The right `add` for the first case; a wrong `mul` for anything else."""
    prompt = "\n".join(str(m.get("content") or "") for m in request["messages"])
    if "return a - b" in prompt:
        return "It subtracts.\n```python\ndef add(a, b):\n    return a + b\n```\n"
    return "```python\ndef mul(a, b):\n    return a ** b\n```\n"


def test_rows_name_their_tarball_and_get_the_sets_test_tools(tmp_path: Path) -> None:
    suite = load_suite("realbugs", make_set(tmp_path))
    assert [t.id for t in suite.tasks] == ["tiny-1", "tiny-2", "tiny-3"]
    assert suite.skipped == ["line 4: no workspace tarball at cases/tiny-9/workspace.tar.gz"]
    first = suite.tasks[0]
    assert first.kind == "realbugs" and first.extra["tests"] == ["tests/test_calc.py::test_add"]
    assert first.extra["requirements"] == list(TEST_TOOLS) and first.extra["project"] == "tiny"


def test_a_report_is_red_only_when_the_named_tests_fail_for_a_reason_of_their_own() -> None:
    missing = r"No module named '([\w.]+)'"
    green = TestReport(passed=1)
    assert "pass in the sandbox" in not_red(green, missing)
    assert "did not run" in not_red(TestReport(raw="ERROR: not found: t.py::x"), missing)
    no_module = TestReport(errors=1, failures=[TestFailure(test_id="t", message="ModuleNotFoundError: No module "
                                                                              "named 'jinja2'", kind="error")])
    assert "module is missing" in not_red(no_module, missing)
    # the real failing output misses the same module: the code asks for it by a wrong name, the bug's own
    recorded = "E   ModuleNotFoundError: No module named 'jinja2'\n"
    assert not_red(no_module, missing, "ModuleNotFoundError", recorded) == ""
    assert "module is missing" in not_red(no_module, missing, "ModuleNotFoundError", recorded.replace("jinja2", "yaml"))
    failed = TestReport(failed=1, failures=[TestFailure(test_id="t", message="AssertionError: assert 1 == 2")])
    assert not_red(failed, missing) == "" and not_red(failed, missing, "AssertionError") == ""
    assert "not with the case's JSONDecodeError: AssertionError" in not_red(failed, missing, "JSONDecodeError")


def test_the_expected_exception_is_the_first_one_the_real_output_names(tmp_path: Path) -> None:
    archive = tmp_path / "workspace.tar.gz"
    assert expected_error(archive) == ""  # no output next to it
    (tmp_path / "failing_output.txt").write_text(
        "    def test():\n>       json.loads(x)\nE       json.decoder.JSONDecodeError: Extra data\nE   ValueError\n")
    assert expected_error(archive) == "JSONDecodeError"


@pytest.mark.docker
async def test_the_bench_fixes_one_of_two_and_reports_the_case_that_is_not_red(
    tmp_path: Path, scripted_llm: Any
) -> None:
    scripted_llm.script(oracle)
    config = tmp_path / "cands.toml"
    config.write_text('[loop]\nstrategy = "candidates"\ncandidates = 1\n')
    base = Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False},
        sandbox={"backend": "docker", "test_timeout": 120},
        loop={"max_iterations": 1},
    )
    out = tmp_path / "out"
    options = BenchOptions(suite="realbugs", suite_file=make_set(tmp_path / "set"), out_dir=out,
                           configs=load_configs([config]))
    run = await run_bench(options, base)
    by_task = {r.task: r for r in run.results}
    assert by_task["tiny-1"].outcome == "green", by_task["tiny-1"].error
    assert by_task["tiny-1"].extra["verdict"]["name"] == "same"  # the developers' fix exactly
    assert by_task["tiny-2"].outcome != "green" and by_task["tiny-2"].error == ""
    # the install (a layer built once per requirement set) is kept apart from the cell's wall time
    assert by_task["tiny-1"].extra["setup_seconds"] >= 0 and by_task["tiny-1"].seconds > 0
    assert by_task["tiny-2"].extra["red"] == "0 passed, 1 failed, 0 errors, 0 skipped"
    assert by_task["tiny-3"].outcome == "not_reproduced" and "pass in the sandbox" in by_task["tiny-3"].error

    files = write_reports(run)
    [summary] = files.summaries
    assert (summary.runs, summary.passed, summary.tests_edited) == (2, 1, 0)
    assert summary.by_group == {"tiny": [1, 1], "other": [0, 1]}
    md = files.markdown.read_text()
    assert "| cands | 2 | 50.0% |" in md and "| tiny | 1 / 1 |" in md
    assert "| cands | 1 | 1 (100% of green) | 50.0% (9.5% – 90.5%) | 1 | 0 | 0 | 0 | 0 |" in md
    assert "- tiny-3: not_reproduced: the named tests pass in the sandbox" in md
    # the set itself is untouched: its tarball still holds the buggy code
    with tarfile.open(tmp_path / "set" / "cases" / "tiny-1" / "workspace.tar.gz") as tar:
        handle = tar.extractfile("tiny-1/calc.py")
        assert handle is not None and handle.read().decode() == SUB
    # only the named tests ran (tiny-1's test_other never did), and the model calls are in the bench's store
    with RunStore.open(state_dir(out) / "runs.sqlite3") as store:
        runs = [store.get_run(r.id) for r in store.list_runs(limit=10)]
    assert len(runs) == 2 and all(d.calls for d in runs)
    ran = [e for d in runs for e in d.events if e.get("kind") == "tests_ran"]
    assert ran and all(e["passed"] + e["failed"] + e["errors"] <= 1 for e in ran)
