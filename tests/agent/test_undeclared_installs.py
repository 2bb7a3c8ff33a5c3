"""A name nobody declared is not installed without consent, and what is installed never runs code on the host.

The project imports a module that only a test-made index on 127.0.0.1 has, as an sdist whose setup.py
writes a marker file (tests/support/package_index.py): a typo or a hostile repository looks like this.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested, EnvironmentChanged, Message
from greenloop.agent.install_gate import InstallGate, ask_user
from greenloop.agent.orchestration.describe import describe
from greenloop_sandbox.languages import load_language
from tests.agent.conftest import collect, plan, write_project
from tests.support.package_index import PackageIndex, extra_index, unique_name


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    with extra_index(monkeypatch) as served:
        yield served


def typo_project(root: Path, module: str) -> Path:
    return write_project(root, {
        "use.py": f"import {module}\n\n\ndef value():\n    return {module}.VALUE\n",
        "test_use.py": "from use import value\n\n\ndef test_value():\n    assert value() == 42\n",
    })


async def test_the_gate_sorts_declared_mapped_consented_and_refused() -> None:
    python = load_language("python")
    gate = InstallGate.of("never", ["Allowed-One"])
    got = await gate.decide(["Six>=1", "PyYAML", "allowed_one", "reqests"], ["six"], python)
    assert got.allowed == {"Six>=1": "declared", "PyYAML": "mapped", "allowed_one": "consented"}
    assert list(got.refused) == ["reqests"] and "--allow-install reqests" in got.refused["reqests"]
    asked: list[str] = []

    async def say_no(spec: str) -> bool:
        asked.append(spec)
        return False

    token = ask_user.set(say_no)
    try:
        ask = InstallGate.of("ask", [])
        assert (await ask.decide(["reqests"], [], python)).refused
        assert (await ask.decide(["reqests"], [], python)).refused  # asked once per run
        assert asked == ["reqests"] and "you said no" in ask._reason("reqests")
        assert (await InstallGate.of("always", []).decide(["reqests"], [], python)).allowed == {"reqests": "consented"}
    finally:
        ask_user.reset(token)
    # "ask" with nobody to ask (the CLI) is "never"
    assert (await InstallGate.of("ask", []).decide(["reqests"], [], python)).refused


@pytest.mark.docker
async def test_an_undeclared_import_is_not_installed_by_default_and_says_so(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, index: PackageIndex
) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    module = index.add_sdist(name, "1.0", marker)
    ws = typo_project(tmp_path / "ws", module)
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1, "small_edits": 0})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome != "green" and done.changes.packages == []
    refused = [e for e in events if isinstance(e, CandidateTested) and e.route == "install"]
    assert refused and "does not declare it" in refused[0].reason and f"--allow-install {module}" in refused[0].reason
    assert not marker.exists()


@pytest.mark.docker
async def test_with_consent_the_sdist_is_built_in_the_sandbox_and_the_tests_see_it(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, index: PackageIndex
) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    module = index.add_sdist(name, "1.0", marker)
    ws = typo_project(tmp_path / "ws", module)
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1},
                             sandbox={"allow_install": [module]})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    [installed] = done.changes.installs
    assert (installed.name, installed.origin, installed.built) == (name, "consented", "sandbox")
    assert installed.sha256 == index.listed[installed.filename] and scripted_llm.requests == []
    assert not marker.exists()


@pytest.mark.docker
async def test_a_plan_strategy_install_passes_the_same_gate(
    tmp_path: Path, scripted_llm: Any, plan_strategy: Any, index: PackageIndex
) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    module = index.add_sdist(name, "1.0", marker)
    ws = typo_project(tmp_path / "ws", module)
    scripted_llm.script(plan({"kind": "install", "packages": [name]}, diagnosis="not installed"), step="debug_plan")
    events, done = await collect(fix(FixRequest(ws), plan_strategy(ws, loop={"diagnosis": False, "max_iterations": 1})))
    assert done.changes.packages == []
    [env] = [e for e in events if isinstance(e, EnvironmentChanged)]
    assert not env.ok and "refused" in env.output
    assert any(isinstance(e, Message) and "does not declare it" in e.text for e in events)
    assert not marker.exists()
    scripted_llm.script(plan({"kind": "install", "packages": [name]}, diagnosis="not installed"), step="debug_plan")
    consented = plan_strategy(ws, loop={"diagnosis": False, "max_iterations": 1}, sandbox={"allow_install": [name]})
    events, done = await collect(fix(FixRequest(ws), consented))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert [(i.name, i.built) for i in done.changes.installs] == [(name, "sandbox")]
    assert not marker.exists()


async def test_the_local_backend_refuses_the_sdist_even_with_consent(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, index: PackageIndex
) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    module = index.add_sdist(name, "1.0", marker)
    ws = typo_project(tmp_path / "ws", module)
    settings = make_settings(ws, "local", loop={"strategy": "candidates", "max_iterations": 1, "small_edits": 0},
                             sandbox={"install_undeclared": "always"})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome != "green" and done.changes.packages == []
    tried = [e for e in events if isinstance(e, CandidateTested) and e.route == "install"]
    assert tried and "only a source distribution" in tried[0].reason and "Docker backend" in tried[0].reason
    assert not marker.exists()


async def test_a_wheel_that_lacks_the_missing_module_is_said(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, index: PackageIndex
) -> None:
    name = unique_name()
    index.add_wheel(name, "1.0", module="something_else")
    ws = typo_project(tmp_path / "ws", name.replace("-", "_"))
    settings = make_settings(ws, "local", loop={"strategy": "candidates", "max_iterations": 1, "small_edits": 0},
                             sandbox={"install_undeclared": "always"})
    events, done = await collect(fix(FixRequest(ws), settings))
    tried = [e for e in events if isinstance(e, CandidateTested) and e.route == "install"]
    assert tried and "none of it provides the module" in tried[0].reason and "something_else" in tried[0].reason
    assert done.outcome != "green"
