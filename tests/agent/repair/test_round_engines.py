"""A round's candidates tested on two Docker engines at once (`sandbox.workers`, `sandbox.engines`).

The second engine is a real `dockerd` started by the test with no images: the sandbox image reaches it by
`docker save | load`. Both engines run candidates; neither keeps a container afterwards; an engine that
is down is skipped with a warning and the round goes on with the rest.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.reaper import list_containers
from tests.agent.conftest import collect
from tests.agent.orchestration.test_candidate_strategy import RIGHT, WRONG, candidates
from tests.support.second_docker import second_engine

pytestmark = [pytest.mark.docker, pytest.mark.cluster, pytest.mark.timeout(240)]

DEFAULT = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
POWER = "It should add.\n```python\ndef add(a, b):\n    return a ** b\n```\n"
SWAPPED = "It should add.\n```python\ndef add(a, b):\n    return b - a\n```\n"


@pytest.fixture(scope="module")
def engine_two() -> Iterator[str]:
    with second_engine() as url:
        yield url


def _started(url: str, run_id: str, since: float) -> int:
    """Sandbox containers of the run that started on the engine at `url`."""
    events = docker_client(url).events(since=int(since), until=int(time.time()) + 1, decode=True,
                                       filters={"type": "container", "event": "start",
                                                "label": f"greenloop.label={run_id}"})
    return sum(1 for _ in events)


async def test_a_rounds_candidates_are_tested_on_both_engines(
    calc_project: Path, scripted_llm: Any, make_settings: Any, engine_two: str
) -> None:
    scripted_llm.script(WRONG, POWER, SWAPPED, RIGHT, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates(), sandbox={"workers": 2, "engines": [DEFAULT, engine_two]})
    since = time.time() - 1
    events, done = await collect(fix(FixRequest(calc_project), settings))

    assert done.outcome == "green", done.summary + done.evidence
    tested = [e for e in events if isinstance(e, CandidateTested)]
    assert [(e.index, e.status, e.green) for e in tested] == [
        (1, "tested", False), (2, "tested", False), (3, "tested", False), (4, "tested", True)]
    assert _started(DEFAULT, done.run_id, since) >= 1 and _started(engine_two, done.run_id, since) >= 1
    for url in (DEFAULT, engine_two):  # nothing left behind on either engine
        assert [c.name for c in list_containers(docker_client(url))
                if c.labels.get("greenloop.label") == done.run_id] == []


async def test_an_engine_that_is_down_is_skipped_and_the_round_goes_on(
    calc_project: Path, scripted_llm: Any, make_settings: Any, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    scripted_llm.script(WRONG, RIGHT, step="repair_function", repeat=False)
    down = f"unix://{tmp_path}/no-engine.sock"
    settings = make_settings(calc_project, loop=candidates({"candidates": 2}),
                             sandbox={"workers": 2, "engines": [down, DEFAULT]})
    with caplog.at_level(logging.WARNING, logger="greenloop.agent.ports"):
        _, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert any(f"sandbox engine {down} is skipped" in r.getMessage() for r in caplog.records)


async def test_a_green_candidate_stops_the_tests_still_running(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # two sandboxes on the default engine: candidate 2 is being tested when candidate 1 turns out green
    scripted_llm.script(RIGHT, WRONG, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates(), sandbox={"workers": 2})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    tested = [e for e in events if isinstance(e, CandidateTested)]
    assert [(e.index, e.green) for e in tested] == [(1, True)]
    assert len(scripted_llm.requests_for("repair_function")) == 2  # the second was asked, its test cancelled
    assert [c.name for c in list_containers(docker_client()) if c.labels.get("greenloop.label") == done.run_id] == []
