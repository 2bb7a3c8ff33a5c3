"""`greenloop sandbox run | reap | build-images` and `greenloop doctor`, through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.cli import main
from greenloop.cli.doctor import sections
from greenloop.settings import Settings
from tests.sandbox.conftest import PROJECTS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "calculator"


@pytest.mark.parametrize("backend", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_sandbox_run_prints_the_parsed_report(request: pytest.FixtureRequest, backend: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    assert main(["sandbox", "run", str(EXAMPLE), "--sandbox", backend, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == backend and data["template"] == "python"
    assert (data["passed"], data["failed"]) == (4, 2)
    assert {f["test_id"] for f in data["failures"]} == {
        "tests/test_calculator.py::test_average", "tests/test_calculator.py::test_average_of_one"}


def test_sandbox_run_green_project_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "run", str(PROJECTS / "python-pass"), "--sandbox", "local"]) == 0
    assert capsys.readouterr().out.startswith("GREEN  3 passed")


def test_sandbox_run_on_a_missing_folder_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "run", str(tmp_path / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.docker
@pytest.mark.usefixtures("docker_images")
def test_build_images_is_cached_and_reap_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "build-images", "--template", "python"]) == 0
    out = capsys.readouterr().out
    assert "greenloop/base:" in out and "greenloop/python:" in out
    assert main(["sandbox", "reap"]) == 0
    assert "leftover(s) removed" in capsys.readouterr().out


@pytest.mark.docker
@pytest.mark.usefixtures("docker_images")
def test_doctor_lists_engine_images_and_toolchains(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    titles = [s["title"] for s in data]
    assert titles[:3] == ["Docker engine", "Sandbox images", "Host toolchains"]
    engine = data[0]["checks"][0]
    assert engine["ok"] and "version" in engine["detail"]
    images = {c["name"]: c["ok"] for c in data[1]["checks"]}
    assert images == {"image base": True, "image node": True, "image python": True, "image rust": True}
    assert all(set(c) == {"name", "ok", "detail", "fix"} for s in data for c in s["checks"])


def test_doctor_sections_are_extensible() -> None:
    titles = [s.title for s in sections(Settings())]
    assert titles[:3] == ["Docker engine", "Sandbox images", "Host toolchains"]


@pytest.mark.docker
@pytest.mark.usefixtures("docker_images")
def test_sandbox_run_prints_pytests_own_message_when_no_report_was_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a conftest that fails at import: pytest stops before the session, so it writes no JUnit report
    (tmp_path / "conftest.py").write_text("import inspect\n\nSPEC = inspect.getargspec(len)\n")
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    assert main(["sandbox", "run", str(tmp_path), "--sandbox", "docker"]) == 3  # an environment problem
    out = capsys.readouterr().out
    assert "wrote no JUnit report (exit code 4): AttributeError: module 'inspect' has no attribute 'getargspec'" in out
    assert "[conftest.py:3]" in out  # the place, from pytest's output
    assert "ImportError while loading conftest" in out  # pytest's own output, printed
    assert "The tests cannot run in the sandbox: removed api at conftest.py:3" in out and "project.image" in out
