"""A candidate's install is tried apart: it reaches the next candidate's environment, and the state's, only
when the state moves to it. Real Docker sandbox, a package index on 127.0.0.1, real HTTP to the scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested, RoundEnded
from greenloop.agent.orchestration.describe import describe
from tests.agent.conftest import collect, write_project
from tests.support.package_index import PackageIndex, extra_index, unique_name

pytestmark = pytest.mark.docker


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    with extra_index(monkeypatch) as served:
        yield served


@pytest.mark.parametrize("backend", ["docker", "local"])
async def test_an_install_that_does_not_move_the_state_does_not_reach_the_next_candidate(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, index: PackageIndex, backend: str
) -> None:
    name = unique_name()
    # the wheel installs, but its import fails as before (a build that lacks its own part): no better, and it
    # must not stay
    module = name.replace("-", "_")
    index.add_wheel(name, "1.0", body=f"raise ModuleNotFoundError(\"No module named '{module}'\")")
    ws = write_project(tmp_path / "ws", {
        "use.py": f"def value():\n    import {module}\n    return {module}.VALUE\n",
        "test_use.py": "from use import value\n\n\ndef test_value():\n    assert value() == 42\n",
    })
    # green only where the package is not installed: the next round's candidate sees the environment it gets
    reply = (f"```python\ndef value():\n    import importlib.util\n\n"
             f"    return 42 if importlib.util.find_spec({module!r}) is None else -1\n```\n")
    scripted_llm.script(reply, step="repair_function")
    settings = make_settings(ws, backend, loop={"candidates": 1, "max_iterations": 2, "small_edits": 0},
                             sandbox={"install_undeclared": "always"})
    events, done = await collect(fix(FixRequest(ws), settings))

    rounds = [(e.approach, e.ended) for e in events if isinstance(e, RoundEnded)]
    assert rounds == [(f"install {module}", "nothing_better"), ("`value` in use.py", "green")], rounds
    [install] = [e for e in events if isinstance(e, CandidateTested) and e.route == "install"]
    assert install.status == "tested" and install.errors + install.failed == 1  # it installed, and did not help
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert done.changes.packages == [] and done.changes.installs == []  # the change set holds no install
