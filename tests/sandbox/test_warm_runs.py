"""Warm test runs (warm.py, warm_worker.py) give a cold run's results, fall back to cold, and leave nothing behind."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent.ports import SandboxPort
from greenloop_sandbox import (
    DockerSandbox,
    ExecResult,
    Limits,
    LocalSandbox,
    Sandbox,
    TestReport,
    load_template,
)
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.images import build_template_image
from greenloop_sandbox.warm import WarmRuns, rerun_reason
from tests.sandbox.conftest import project, sandbox_containers

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]
LIMITS = Limits(test_case_timeout=10, test_timeout=120)
FLAGLIB = "import os\n\nFLAG = os.environ.get('WARM_FLAG', 'unset')\n"
STEADYLIB = "VALUE = 42\n"
PLUGIN = {  # a pytest11 plugin's distribution (pytest marks its package for rewriting) and a library using it
    "plugpkg/__init__.py": "VALUE = 7\n",
    "plugpkg/plugin.py": "import pytest\n\nimport plugpkg\n\n\n@pytest.fixture\ndef plug_value():\n    return plugpkg.VALUE\n",
    "plugpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: plugpkg\nVersion: 1.0\n",
    "plugpkg-1.0.dist-info/entry_points.txt": "[pytest11]\nplugpkg = plugpkg.plugin\n",
    "plugpkg-1.0.dist-info/RECORD": "plugpkg/__init__.py,,\nplugpkg/plugin.py,,\nplugpkg-1.0.dist-info/METADATA,,\n",
    "userlib.py": "from plugpkg import VALUE\n",
}
THREADLIB = "import threading, time\n\nT = threading.Thread(target=time.sleep, args=(3600,), daemon=True)\nT.start()\n"


@pytest.fixture(scope="session")
def python_image() -> None:
    build_template_image(docker_client(), load_template("python"))


def _open(request: pytest.FixtureRequest, backend: str, warm: bool) -> Sandbox:
    if backend == "docker":
        request.getfixturevalue("python_image")
        return DockerSandbox(load_template("python"), limits=LIMITS, warm_runs=warm)
    return LocalSandbox(load_template("python"), limits=LIMITS, warm_runs=warm)


@pytest.fixture
async def pair(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[tuple[Sandbox, Sandbox]]:
    """A cold sandbox and a warm one of the same backend."""
    async with _open(request, backend, False) as cold, _open(request, backend, True) as warm:
        yield cold, warm


def outcomes(report: TestReport) -> tuple[Any, ...]:
    """What must be equal warm and cold: each test's outcome, the counts, the exit code."""
    cases = sorted((c.test_id, c.outcome) for c in report.cases)
    failures = sorted((f.test_id, f.kind) for f in report.failures)
    return report.passed, report.failed, report.errors, report.skipped, cases, failures, report.exit_code


async def add_library(sandbox: Sandbox, name: str, text: str) -> None:
    """A file outside the workspace, on the test runs' path: a library as an install would leave it."""
    if isinstance(sandbox, LocalSandbox):
        assert sandbox.root is not None
        (sandbox.root / "site-packages" / name).parent.mkdir(parents=True, exist_ok=True)
        (sandbox.root / "site-packages" / name).write_text(text)
        return
    program = ("import os, site, sys; p = os.path.join(site.getusersitepackages(), sys.argv[1]); "
               "os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write(sys.argv[2])")
    assert (await sandbox.exec(["python3", "-c", program, name, text])).ok


async def same_runs(cold: Sandbox, warm: Sandbox, files: dict[str, bytes], runs: int) -> list[TestReport]:
    await cold.sync(files)
    await warm.sync(files)
    reports = []
    for _ in range(runs):
        want, got = await cold.run_tests(), await warm.run_tests()
        assert outcomes(got) == outcomes(want), got.raw[-3000:]
        reports.append(got)
    return reports


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forks_threads_workspace_writes_give_the_cold_results(pair: tuple[Sandbox, Sandbox]) -> None:
    cold, warm = pair
    reports = await same_runs(cold, warm, project("python-warm"), 2)
    first, second = reports[0], reports[1]
    assert {c.test_id.rsplit("::", 1)[1]: c.outcome for c in first.cases} == {
        "test_add": "passed", "test_wrong": "failed", "test_thread_started_at_import": "passed",
        "test_fork": "passed", "test_multiprocessing": "passed", "test_writes_the_workspace": "passed",
        "test_project_modules_imported_fresh": "passed"}
    assert second.failed == 2  # the workspace file the first run wrote
    state = warm.warm  # type: ignore[attr-defined]
    assert (state.warm, state.cold, state.off) == (2, 0, "")
    # an edit to the project's module is seen by the next run, as cold
    edited = {"calc.py": project("python-warm")["calc.py"].replace(b"return a + b", b"return a + b + 1")}
    await cold.sync({**project("python-warm"), **edited})
    await warm.sync({**project("python-warm"), **edited})
    want, got = await cold.run_tests(), await warm.run_tests()
    assert outcomes(got) == outcomes(want) and got.passed == want.passed and "test_add" in str(got.failures)
    # an edit of the same size at once after it (the same second): the worker's bytecode is checked by hash
    same_size = {"calc.py": edited["calc.py"].replace(b"return a + b + 1", b"return a + b - 0")}
    await cold.sync({**project("python-warm"), **same_size})
    await warm.sync({**project("python-warm"), **same_size})
    want, got = await cold.run_tests(), await warm.run_tests()
    assert outcomes(got) == outcomes(want) and "test_add" not in str(got.failures)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_library_that_reads_what_a_conftest_set_is_imported_after_it(
        pair: tuple[Sandbox, Sandbox]) -> None:
    cold, warm = pair
    for box in pair:
        await add_library(box, "flaglib.py", FLAGLIB)
        await add_library(box, "steadylib.py", STEADYLIB)
    reports = await same_runs(cold, warm, project("python-warm-library"), 2)
    assert all(r.passed == 2 for r in reports)
    assert warm.warm.warm == 2 and not warm.warm.off  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_plugin_package_a_library_imports_keeps_runs_warm_under_warnings_as_errors(
        pair: tuple[Sandbox, Sandbox]) -> None:
    """fastapi's case: starlette imports anyio, a pytest plugin's package; the worker imports it plainly, and
    pytest's "already imported, cannot be rewritten" warning (an error under `filterwarnings = error`)
    ended every forked run."""
    cold, warm = pair
    for box in pair:
        for name, text in PLUGIN.items():
            await add_library(box, name, text)
    reports = await same_runs(cold, warm, project("python-warm-plugin"), 2)
    assert all(r.passed == 1 and "Warning" not in r.raw for r in reports), reports[-1].raw[-2000:]
    state = warm.warm  # type: ignore[attr-defined]
    assert (state.warm, state.cold, state.off) == (2, 0, "")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_library_that_starts_a_thread_sends_the_runs_cold_and_says_so_once(
        pair: tuple[Sandbox, Sandbox]) -> None:
    cold, warm = pair
    files = {"tests/test_thread.py": b"import threadlib\n\n\ndef test_alive():\n    assert threadlib.T.is_alive()\n"}
    for box in pair:
        await add_library(box, "threadlib.py", THREADLIB)
    reports = await same_runs(cold, warm, files, 2)
    assert all(r.passed == 1 for r in reports)
    state = warm.warm  # type: ignore[attr-defined]
    assert "thread" in state.off and state.pgid is None
    port = SandboxPort(warm)  # the way the loop hears of it (a Message, once per run)
    notice = port.warm_notice()
    assert notice is not None and "cold" in notice and "thread" in notice and port.warm_notice() is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_test_that_kills_its_own_process_is_rerun_cold(pair: tuple[Sandbox, Sandbox]) -> None:
    cold, warm = pair
    reports = await same_runs(cold, warm, project("python-warm-dies"), 2)
    assert reports[0].exit_code == 137
    state = warm.warm  # type: ignore[attr-defined]
    assert state.cold == 2 and not state.off and state.pgid is not None  # the worker itself lives on


async def _signal_worker(sandbox: Sandbox, sig: str) -> None:
    pgid = sandbox.warm.pgid  # type: ignore[attr-defined]
    assert pgid is not None
    if isinstance(sandbox, LocalSandbox):  # the worker, or under `unshare --fork` its child
        children = (await asyncio.to_thread(Path(f"/proc/{pgid}/task/{pgid}/children").read_text)).split()
        os.kill(int(children[0]) if children else pgid, getattr(signal, f"SIG{sig}"))
    else:
        assert (await sandbox.exec(f"kill -{sig} {pgid}")).ok


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sig", ["KILL", "STOP"])
async def test_a_dead_or_hung_worker_is_replaced_and_the_run_is_rerun_cold(
        pair: tuple[Sandbox, Sandbox], sig: str) -> None:
    cold, warm = pair
    state = warm.warm  # type: ignore[attr-defined]
    state.ack_seconds = 2
    await same_runs(cold, warm, project("python-pass"), 1)
    first = state.pgid
    await _signal_worker(warm, sig)
    await same_runs(cold, warm, project("python-pass"), 1)
    assert state.cold == 1 and state.pgid is None and not state.off
    await same_runs(cold, warm, project("python-pass"), 1)
    assert state.warm == 2 and state.pgid not in (None, first)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_nothing_is_left_behind(request: pytest.FixtureRequest, backend: str) -> None:
    box = _open(request, backend, True)
    async with box:
        await box.sync(project("python-warm"))
        assert (await box.run_tests()).passed == 6
        pgid = box.warm.pgid  # type: ignore[attr-defined]
        root = box.root if isinstance(box, LocalSandbox) else None
        assert pgid is not None
    if isinstance(box, LocalSandbox):
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        assert root is not None and not await asyncio.to_thread(Path(root).exists)
    else:
        await asyncio.sleep(0)
        assert sandbox_containers(os.getpid()) == []


def test_only_the_python_runner_runs_warm_and_a_bad_end_is_rerun() -> None:
    class Host:
        def worker_paths(self) -> tuple[str, str]:
            return "/w/warm_worker.py", "/w/sock"

    runs = WarmRuns(enabled=True)
    warm = runs.command("python3 /opt/greenloop/run_pytest.py -vv --junitxml=/r/j.xml 'a b.py'", "/opt/greenloop",
                        Host())  # type: ignore[arg-type]
    assert warm == "python3 -S -P /w/warm_worker.py run /w/sock 60 -- -vv --junitxml=/r/j.xml 'a b.py'"
    assert runs.command("npm test", "/opt/greenloop", Host()) is None  # type: ignore[arg-type]
    assert WarmRuns().command("python3 /opt/greenloop/run_pytest.py -vv", "/opt/greenloop", Host()) is None  # type: ignore[arg-type]
    ok = ExecResult(1, "", "", 1.0)
    assert rerun_reason(ok, "<testsuites/>") is None
    assert "exit code 137" in (rerun_reason(ExecResult(137, "", "", 1.0), None) or "")
    assert "no report" in (rerun_reason(ExecResult(0, "", "", 1.0), None) or "")
    said = ExecResult(121, "", "greenloop-warm: unavailable: the worker does not answer (refused)\n", 1.0)
    assert "does not answer" in (rerun_reason(said, None) or "")
