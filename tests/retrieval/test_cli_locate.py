"""`greenloop locate` end to end: saved output, --json contract, --run through the local sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.retrieval import projects
from tests.sandbox.conftest import docker_images  # noqa: F401 (the fixture, for the docker test)
from tests.support import shop

KEYS = {"path", "symbol", "kind", "start_line", "end_line", "score", "why", "role", "signals"}


def _greenloop(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "greenloop", "locate", *args],
        capture_output=True, text=True, timeout=240, input=stdin, check=False,
    )


def test_locate_json_from_saved_output(tmp_path: Path) -> None:
    projects.write(tmp_path, projects.PY_FILES)
    output = tmp_path.parent / f"{tmp_path.name}-out.txt"
    output.write_text(projects.pytest_output(tmp_path, "tests/test_ops.py::test_divide"))
    done = _greenloop(str(tmp_path), "--test-output", str(output), "--json", "--top", "3")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [set(item) for item in found] == [KEYS] * 3
    assert {item["role"] for item in found} == {"target"}
    helper = next(item for item in found if item["symbol"] == "helper")
    assert (helper["path"], helper["start_line"]) == ("src/calc/ops.py", 4)
    assert set(helper["signals"][0]) == {"name", "value", "contribution", "note"}
    assert helper["signals"][0]["name"] == "frame"
    assert {found[0]["symbol"], found[1]["symbol"]} == {"helper", "divide"}
    human = _greenloop(str(tmp_path), "--test-output", "-", "--context", stdin=output.read_text())
    assert human.returncode == 0 and "helper" in human.stdout and "## Code" in human.stdout


def test_locate_errors_are_clear(tmp_path: Path) -> None:
    missing = _greenloop(str(tmp_path / "nope"), "--test-output", "x.txt")
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    unreadable = _greenloop(str(tmp_path), "--test-output", str(tmp_path / "absent.txt"))
    assert unreadable.returncode == 2 and "cannot read the test output" in unreadable.stderr
    both = _greenloop(str(tmp_path), "--run", "--test-output", "x.txt")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_locate_run_through_the_local_sandbox(tmp_path: Path) -> None:
    projects.write(tmp_path, projects.PY_FILES)
    done = _greenloop(str(tmp_path), "--run", "--sandbox", "local", "--template", "python", "--json", "--top", "10")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    symbols = [item["symbol"] for item in found]
    assert {"helper", "divide", "average", "parse"} <= set(symbols)
    assert "3 failed" in done.stderr


@pytest.mark.docker
@pytest.mark.usefixtures("docker_images")
def test_locate_run_with_coverage_in_docker_says_why(tmp_path: Path) -> None:
    for path, data in shop.files().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    done = _greenloop(str(tmp_path), "--run", "--coverage", "--sandbox", "docker", "--json", "--top", "5")
    assert done.returncode == 0, done.stderr
    assert "coverage: 1 failing and 4 passing tests" in done.stderr
    found = {item["symbol"]: item for item in json.loads(done.stdout)}
    executed = next(s for s in found[shop.BUGGY]["signals"] if s["name"] == "executed")
    assert executed["note"].startswith("line ") and "0 of 4 passing tests (Ochiai 1.00)" in executed["note"]
