"""Sandbox test fixtures: the sample projects, and a Docker engine with the images built (never skipped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop_sandbox import SandboxError, read_tree
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.images import build_template_image
from greenloop_sandbox.reaper import list_containers
from greenloop_sandbox.templates import load_template, template_names

PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "projects"


def project(name: str) -> dict[str, bytes]:
    return dict(read_tree(PROJECTS / name))


@pytest.fixture(scope="session")
def docker_images() -> None:
    """All template images, built if missing. No engine is a failure here, not a skip: CI starts one."""
    try:
        client = docker_client()
    except SandboxError as exc:
        pytest.fail(f"the docker tests need a Docker engine: {exc}")
    for name in template_names():
        build_template_image(client, load_template(name))


def sandbox_containers(owner_pid: int | None = None) -> list[str]:
    """Sandbox containers on the engine; with `owner_pid`, only that process's (the engine may be shared)."""
    found = list_containers(docker_client())
    if owner_pid is not None:
        found = [c for c in found if c.labels.get("greenloop.owner_pid") == str(owner_pid)]
    return [c.name for c in found]
