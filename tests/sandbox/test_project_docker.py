"""A project's own test command and image on the real engine: reports, Dockerfile cache, setup, bad input."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from greenloop_sandbox import DockerSandbox, ProjectEnv, SandboxError, load_template
from greenloop_sandbox import project_images as project_images_mod
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.images import template_tag

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_images")]

CALC = b"def add(a, b):\n    return a - b\n"
CHECK = b"import sys\nsys.path.insert(0, 'src')\nfrom calc import add\nassert add(2, 3) == 5, add(2, 3)\n"
TEST = b"import sys\nsys.path.insert(0, 'src')\nfrom calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def new_images() -> Iterator[None]:
    """Images a test builds (a unique Dockerfile) are removed after it; the ones that were there stay."""
    client = docker_client()
    before = {image.id for image in client.images.list(all=True)}
    yield
    for image in client.images.list(filters={"label": "greenloop.image"}):
        if image.id not in before and any(t.startswith(("greenloop/project:", "greenloop/layer:")) for t in image.tags):
            for tag in image.tags:
                client.images.remove(tag, force=True)


async def test_own_command_with_its_report_file_then_with_only_its_exit_code() -> None:
    python = load_template("python")
    files = {"src/calc.py": CALC, "checks/test_calc.py": TEST, "checks/run.py": CHECK}
    junit = ProjectEnv(test_command="python3 -m pytest -q checks --junitxml=build/out.xml",
                       test_report="build/out.xml")
    async with DockerSandbox(python, project=junit) as sb:
        await sb.sync(files)
        report = await sb.run_tests(["checks/test_calc.py::test_add"])
        assert (report.parser, report.failed, report.passed) == ("junit", 1, 0)
        assert report.failures[0].test_id.endswith("test_calc::test_add")  # every test ran, none selected
        # the report of an earlier run is removed first: a command that writes none is read from its exit code
        await sb.exec("mkdir -p build && echo '<testsuite/>' > build/out.xml")
        sb.template = ProjectEnv(test_command="python3 checks/run.py", test_report="build/out.xml").apply(python)
        again = await sb.run_tests()
        assert again.parser == "exit-code" and not again.green
        failure = again.failures[0]
        assert (failure.file, failure.line) == ("checks/run.py", 4) and "AssertionError" in failure.traceback


async def test_a_projects_dockerfile_is_built_once_then_reused(monkeypatch: pytest.MonkeyPatch,
                                                               new_images: None) -> None:
    builds: list[str] = []
    real_build = project_images_mod.build_image

    def counting(client: Any, tag: str, *args: Any, **kwargs: Any) -> tuple[bool, str]:
        builds.append(tag)
        return real_build(client, tag, *args, **kwargs)

    monkeypatch.setattr(project_images_mod, "build_image", counting)
    marker = uuid.uuid4().hex
    project = ProjectEnv(
        test_command="cat /opt/tool.txt && test \"$(whoami)\" = sandbox",
        dockerfile=f"ARG BASE\nFROM ${{BASE}}\nUSER root\nCOPY tool.txt /opt/tool.txt\nRUN echo {marker}\n",
        context=(("tool.txt", marker.encode(), 0o644),),
    )
    async with DockerSandbox(load_template("python"), project=project) as sb:
        report = await sb.run_tests()
        assert report.green, report.raw
        assert marker in report.raw
    assert len(builds) == 2 and builds[0].startswith("greenloop/project:")  # the Dockerfile, then the fit layer
    async with DockerSandbox(load_template("python"), project=project) as sb:
        assert (await sb.run_tests()).green
    assert len(builds) == 2  # nothing built the second time


async def test_setup_commands_on_an_existing_image() -> None:
    python = load_template("python")
    project = ProjectEnv(image=template_tag(python), setup=("echo baked > /opt/setup.txt", "chmod 644 /opt/setup.txt"),
                         test_command="cat /opt/setup.txt")
    async with DockerSandbox(python, project=project) as sb:
        report = await sb.run_tests()
        assert report.green and "baked" in report.raw
        assert (await sb.exec("id -u")).stdout.strip() == "1000"


async def test_a_dockerfile_that_fails_shows_the_end_of_its_build_log_and_leaves_nothing(new_images: None) -> None:
    client = docker_client()
    before = {c.id for c in client.containers.list(all=True)}
    noisy = f"RUN echo {uuid.uuid4().hex}; for i in $(seq 1 3000); do echo line $i; done; echo the last words; exit 3"
    project = ProjectEnv(test_command="true", dockerfile=f"ARG BASE\nFROM ${{BASE}}\n{noisy}\n")
    with pytest.raises(SandboxError) as caught:
        async with DockerSandbox(load_template("python"), project=project):
            pass
    message = str(caught.value)
    assert "Building .greenloop/Dockerfile failed" in message and "the last words" in message
    assert "cut" in message and len(message) < project_images_mod.LOG_TAIL + 500
    # build containers too; the engine may be shared (another run's sandboxes carry their owner's pid)
    left = [c for c in client.containers.list(all=True) if c.id not in before]
    assert [c.name for c in left if c.labels.get("greenloop.owner_pid") in (None, str(os.getpid()))] == []


async def test_an_image_that_is_not_there_is_not_pulled() -> None:
    project = ProjectEnv(image=f"greenloop-test/absent:{uuid.uuid4().hex[:8]}")
    with pytest.raises(SandboxError, match="not on this Docker engine, and greenloop never pulls"):
        async with DockerSandbox(load_template("python"), project=project):
            pass
