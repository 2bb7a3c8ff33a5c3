"""Both backends against real runs: sample projects, timeouts, stragglers, floods, network, env, sync."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator

import pytest

from greenloop_sandbox import DockerSandbox, Limits, LocalSandbox, Sandbox, load_template
from tests.sandbox.conftest import project

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]

# project -> (passed, failed, skipped, {test_id: (file, line)})
EXPECTED = {
    "python-pass": (3, 0, 0, {}),
    "python-fail": (2, 2, 1, {"tests/test_calc.py::test_sub": ("tests/test_calc.py", 12),
                              "tests/test_calc.py::TestDiv::test_div_by_zero_message": ("tests/test_calc.py", 20)}),
    "node-pass": (2, 0, 0, {}),
    "node-fail": (1, 1, 1, {"subtracts": ("test/calc.test.js", 10)}),
    "rust-pass": (2, 0, 0, {}),
    "rust-fail": (1, 2, 1, {"tests::subtracts": ("src/lib.rs", 20), "sub_is_not_add": ("tests/integration.rs", 3)}),
}


def make(backend: str, template: str, **limits: object) -> Sandbox:
    env, lim = load_template(template), Limits(**limits)  # type: ignore[arg-type]
    return DockerSandbox(env, limits=lim) if backend == "docker" else LocalSandbox(env, limits=lim)


@pytest.fixture
async def sandbox(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[Sandbox]:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    async with make(backend, "python", output_limit=100_000) as sb:
        yield sb


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_sample_projects_give_the_right_report(request: pytest.FixtureRequest, backend: str, name: str) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    passed, failed, skipped, failures = EXPECTED[name]
    async with make(backend, name.split("-")[0]) as sb:
        await sb.sync(project(name))
        report = await sb.run_tests()
    assert (report.passed, report.failed, report.errors, report.skipped) == (passed, failed, 0, skipped), report.raw
    assert {f.test_id: (f.file, f.line) for f in report.failures} == failures
    assert all(f.message and f.traceback for f in report.failures)
    assert report.green == (failed == 0)
    assert report.raw and report.parser


@pytest.mark.parametrize("backend", BACKENDS)
async def test_assertion_messages_are_not_abbreviated(sandbox: Sandbox) -> None:
    test = (
        "def test_counts():\n"
        "    got = {'hello': 1, 'world': 1, 'this': 1, 'is': 1, 'a': 1, 'test': 1}\n"
        "    assert got == {'hello': 2, 'world': 1, 'this': 1, 'is': 1, 'a': 1, 'test': 1}\n"
    )
    await sandbox.sync({"test_counts.py": test.encode()})
    (failure,) = (await sandbox.run_tests()).failures
    # models copy what the report shows; pytest's shortened form ('hel...test') is in no file
    assert "'hello': 1, 'world': 1, 'this': 1" in failure.message + failure.traceback
    assert "..." not in failure.message


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hanging_command_is_killed_at_its_timeout(sandbox: Sandbox) -> None:
    res = await sandbox.exec("echo before; sleep 30; echo after", timeout=1.5)
    assert res.timed_out and not res.ok
    assert res.duration < 10
    assert "before" in res.stdout and "after" not in res.stdout


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_child_that_outlives_its_command_is_killed(sandbox: Sandbox, backend: str) -> None:
    res = await sandbox.exec("setsid sleep 313.25 >/dev/null 2>&1 & nohup sleep 313.25 >/dev/null 2>&1 & echo ok")
    assert res.ok and res.stdout.strip() == "ok"
    if backend == "docker":
        check = await sandbox.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
        assert "313.25" not in check.stdout
    else:
        assert not _host_processes_with("313.25")


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("backend", BACKENDS)
async def test_output_floods_are_capped_head_and_tail(sandbox: Sandbox) -> None:
    res = await sandbox.exec("echo FIRST; yes flood | head -c 20000000; echo; echo LAST", timeout=60)
    assert res.ok and res.truncated
    assert len(res.stdout) < 110_000
    assert res.stdout.startswith("FIRST") and res.stdout.rstrip().endswith("LAST")
    assert "bytes of output cut" in res.stdout


@pytest.mark.parametrize("backend", BACKENDS)
async def test_there_is_no_network_inside(sandbox: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        probe = (f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=3); "
                 "print('CONNECTED')\nexcept OSError as e: print('BLOCKED', e)\n")
        res = await sandbox.exec(["python3", "-c", probe])
        ifaces = await sandbox.exec("tail -n +3 /proc/net/dev | cut -d: -f1")
    finally:
        server.close()
    assert "BLOCKED" in res.stdout, res
    assert [i.strip() for i in ifaces.stdout.split()] == ["lo"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_host_secrets_never_enter(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-host-secret")
    res = await sandbox.exec("env", env={"GIVEN": "yes"})
    assert "host-secret" not in res.stdout
    assert "GIVEN=yes" in res.stdout


@pytest.mark.parametrize("backend", BACKENDS)
async def test_sync_is_incremental_and_handles_odd_paths(sandbox: Sandbox) -> None:
    files = {"tests/ä b/test_ü.py": b"def test_ok():\n    assert 1\n", "keep.txt": b"1", "gone.txt": b"2",
             "run.sh": b"#!/bin/sh\necho script\n"}
    assert await sandbox.sync(files) == 4
    assert await sandbox.sync(files) == 0
    files = {k: v for k, v in files.items() if k != "gone.txt"} | {"keep.txt": b"changed"}
    assert await sandbox.sync(files) == 1
    res = await sandbox.exec("cat keep.txt; ls; ./run.sh")
    assert "changed" in res.stdout and "gone.txt" not in res.stdout and "script" in res.stdout
    report = await sandbox.run_tests()
    assert report.passed == 1 and report.cases[0].test_id == "tests/ä b/test_ü.py::test_ok"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_workspace_dir_is_where_commands_run(backend: str, request: pytest.FixtureRequest) -> None:
    # the fix loop maps a model's absolute path under it (copied from a traceback) to the workspace file
    if backend == "docker":
        request.getfixturevalue("docker_images")
    sb = make(backend, "python")
    assert sb.workspace_dir() is None
    async with sb:
        res = await sb.exec("pwd")
        assert res.ok and res.stdout.strip() == sb.workspace_dir()
    assert sb.workspace_dir() is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_run_tests_times_out_with_a_report(sandbox: Sandbox) -> None:
    await sandbox.sync({"test_hang.py": b"import time\n\ndef test_hang():\n    time.sleep(60)\n"})
    report = await sandbox.run_tests(timeout=3)
    assert report.timed_out and not report.green
    assert report.duration < 15


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_package_that_does_not_exist_is_a_failed_result(sandbox: Sandbox) -> None:
    res = await sandbox.install(["greenloop-no-such-package-xyz==0.0.1"])
    assert res.exit_code != 0
    assert "greenloop-no-such-package-xyz" in res.stderr + res.stdout


@pytest.mark.parametrize("backend", BACKENDS)
async def test_install_makes_a_package_importable(sandbox: Sandbox) -> None:
    res = await sandbox.install(["six==1.16.0"])
    assert res.ok, res
    check = await sandbox.exec(["python3", "-c", "import six; print(six.__version__)"])
    assert check.stdout.strip() == "1.16.0"
