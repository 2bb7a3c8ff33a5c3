"""Five cases of the repository's realbugs set in the real Docker sandbox: red as the bench sees them, green with fix.patch.

The sample spans four projects, three of which need third-party packages (cookiecutter: Jinja2,
arrow, ...; PySnooper: decorator, ...; tqdm: nose), all from the cases whose folders are in git (the
cases built from fetched mirrors are rebuilt by `build.py --missing`, not committed). Each case goes the bench's way: its requirements through the
sandbox's own install (resolved on the host, installed offline in a cached layer), its named tests
run (red, with the exception its real output names), then the developers' fix.patch applied and the
tests run again (green). A case whose set-up no longer installs, or that stops reproducing, fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.bench.scripts import script

from greenloop.bench.suites import load_suite

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "benchmarks" / "data" / "realbugs" / "cases.jsonl"
SAMPLE = ["youtube-dl-3", "tqdm-1", "cookiecutter-4", "PySnooper-3", "cookiecutter-2"]

pytestmark = pytest.mark.docker


def test_sample_is_in_the_set_and_has_dependencies() -> None:
    tasks = {t.id: t for t in load_suite("realbugs", SET).tasks}
    assert set(SAMPLE) <= set(tasks)
    with_packages = {tasks[i].extra["project"] for i in SAMPLE if len(tasks[i].extra["requirements"]) > 2}
    assert {"cookiecutter", "PySnooper", "tqdm"} <= with_packages  # beyond the test tools (pytest, pytest-timeout)


@pytest.mark.parametrize("case_id", SAMPLE)
async def test_case_is_red_then_green_with_its_fix(case_id: str) -> None:
    [task] = [t for t in load_suite("realbugs", SET).tasks if t.id == case_id]
    row = await script("realbugs_sandbox").check(task)
    assert row["installed"], row
    assert row["reproduced"], row
    assert row["fixed_green"], row
