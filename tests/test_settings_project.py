"""The [project] settings: read from greenloop.toml or pyproject.toml, and turned into the sandbox's ProjectEnv."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.ports import project_env
from greenloop.errors import GreenloopError
from greenloop.settings import load_settings


def test_project_settings_from_pyproject_and_the_dockerfile_from_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.greenloop.project]\ntest_command = "tox -e py"\ntest_report = "junit.xml"\nsetup = ["pip install tox"]\n')
    (tmp_path / ".greenloop").mkdir()
    (tmp_path / ".greenloop" / "Dockerfile").write_text("FROM local/ci:1\n")
    settings = load_settings(tmp_path)
    env = project_env(settings, tmp_path)
    assert (env.test_command, env.test_report, env.setup) == ("tox -e py", "junit.xml", ("pip install tox",))
    assert env.dockerfile == "FROM local/ci:1\n" and env.builds_image
    assert project_env(settings, None).dockerfile == ""  # no workspace, no Dockerfile
    with_image = load_settings(tmp_path, {"project": {"image": "local/ci:2", "dockerfile": ""}})
    assert project_env(with_image, tmp_path).dockerfile == "" and project_env(with_image, tmp_path).image == "local/ci:2"


def test_a_report_without_a_command_is_refused(tmp_path: Path) -> None:
    (tmp_path / "greenloop.toml").write_text('[project]\ntest_report = "junit.xml"\n')
    with pytest.raises(GreenloopError, match=r"project\.test_report is the report of project\.test_command"):
        load_settings(tmp_path)


def test_a_dockerfile_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {"project": {"dockerfile": "../elsewhere/Dockerfile"}})
    with pytest.raises(GreenloopError, match="not a clean path inside the workspace"):
        project_env(settings, tmp_path)
