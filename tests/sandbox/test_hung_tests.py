"""A hung test ends at the per-test timeout with its stack, in both backends, even when it forks or floods."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from greenloop.retrieval import parse_frames
from greenloop_sandbox import DockerSandbox, Limits, LocalSandbox, Sandbox, load_template
from greenloop_sandbox.parsers import ParseInput, parse_report

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]
CASE_TIMEOUT = 2.0
RUN_TIMEOUT = 120.0  # the whole run's limit: a hung test must not get anywhere near it

# Each loop sits on one line, so the frame the timeout interrupts is that line, whatever the moment.
SPIN = b"def spin(n):\n    total = 0\n    while True: total += n\n"
HANGS = b"from slow import spin\n\n\ndef test_ok():\n    assert 1\n\n\ndef test_hangs():\n    spin(1)\n"
# The child keeps appending to a file for as long as it lives; the parent waits for it.
FORKS = b"""import multiprocessing, time

def beat():
    while True:
        with open("heartbeat", "a") as fh:
            fh.write(".")
        time.sleep(0.05)

def test_child_hangs():
    child = multiprocessing.Process(target=beat)
    child.start()
    child.join()
"""
FLOODS = b"def test_floods():\n    while True: print('flood ' * 40)\n"


@pytest.fixture
async def sandbox(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[Sandbox]:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    limits = Limits(test_case_timeout=CASE_TIMEOUT, test_timeout=RUN_TIMEOUT, output_limit=100_000)
    cls = DockerSandbox if backend == "docker" else LocalSandbox
    async with cls(load_template("python"), limits=limits) as sb:
        yield sb


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hung_test_fails_at_its_own_timeout_with_the_stack_where_it_hung(sandbox: Sandbox) -> None:
    await sandbox.sync({"slow.py": SPIN, "test_slow.py": HANGS})
    start = time.monotonic()
    report = await sandbox.run_tests()
    assert time.monotonic() - start < 30  # seconds, not the run's 120 s
    assert not report.timed_out and (report.passed, report.failed) == (1, 1)
    [failure] = report.failures
    assert failure.test_id == "test_slow.py::test_hangs" and (failure.file, failure.line) == ("test_slow.py", 9)
    assert "Timeout" in failure.message
    assert "slow.py:3: " in failure.traceback and ">       while True: total += n" in failure.traceback
    # retrieval reads it like any traceback: the loop in spin() is the deepest frame
    frames = parse_frames(failure.traceback, ["slow.py", "test_slow.py"])
    assert [(f.path, f.line) for f in frames[:2]] == [("slow.py", 3), ("test_slow.py", 9)]


# module-level code in a loop: the hang is in the import, before any test runs
IMPORT_LOOPS = b"def add(a, b):\n    return a + b\n\n\nn = 0\nwhile n < 10: n = n * 1\n"
IMPORTS = b"from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_test_module_whose_import_hangs_fails_at_the_timeout_with_the_stack(sandbox: Sandbox) -> None:
    await sandbox.sync({"calc.py": IMPORT_LOOPS, "tests/test_calc.py": IMPORTS})
    start = time.monotonic()
    report = await sandbox.run_tests()
    assert time.monotonic() - start < 30 and not report.timed_out
    [failure] = report.failures
    assert failure.kind == "error" and failure.file == "tests/test_calc.py"
    assert "Timeout" in failure.traceback and "calc.py:6: in <module>" in failure.traceback
    frames = parse_frames(failure.traceback, ["calc.py", "tests/test_calc.py"])
    assert (frames[0].path, frames[0].line) == ("calc.py", 6)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hung_test_whose_child_hangs_too_ends_and_the_child_dies(sandbox: Sandbox) -> None:
    await sandbox.sync({"test_fork.py": FORKS})
    start = time.monotonic()
    report = await sandbox.run_tests()
    assert time.monotonic() - start < 30  # multiprocessing would join the child at exit: the run must not wait
    assert not report.timed_out and report.failed == 1 and "Timeout" in report.failures[0].message
    beats = await sandbox.exec("wc -c < heartbeat")
    await asyncio.sleep(0.5)
    later = await sandbox.exec("wc -c < heartbeat")
    assert int(beats.stdout) > 0 and later.stdout == beats.stdout  # the child ran, and is gone


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hung_test_that_floods_output_ends_capped(sandbox: Sandbox) -> None:
    await sandbox.sync({"test_flood.py": FLOODS})
    start = time.monotonic()
    report = await sandbox.run_tests()
    assert time.monotonic() - start < 30
    assert report.failed == 1 and "Timeout" in report.failures[0].message
    assert "test_flood.py:2" in report.failures[0].traceback
    assert len(report.raw) < 110_000  # the sandbox's output cap, head and tail


def test_the_per_test_timeout_is_in_the_command_only_when_set() -> None:
    python, node, rust = load_template("python"), load_template("node"), load_template("rust")
    assert "--timeout=2.5 -o timeout_method=signal" in python.test_argv("r.xml", [], 2.5)
    assert "--timeout" not in python.test_argv("r.xml", [], 0)
    assert "--test-timeout=2500 " in node.test_argv("r.tap", [], 2.5)
    assert "--test-timeout" not in node.test_argv("r.tap", [], 0)
    assert rust.test_argv("", [], 2.5) == rust.test_argv("", [], 0)  # libtest cannot end one test


NODE_HANG = {
    "package.json": b'{"name": "hang", "version": "1.0.0"}',
    "test/spin.test.js": b"const test = require('node:test');\n"
                         b"function spin() { let i = 0; while (true) { i++; } }\n"
                         b"test('hangs', () => { spin(); });\n",
    "test/other.test.js": b"const test = require('node:test');\ntest('fine', () => {});\n",
}


async def test_a_hung_node_test_ends_its_file_at_the_timeout_where_node_has_the_flag() -> None:
    # the host's node (20 here and in CI) has --test-timeout; node applies it to the file's process
    async with LocalSandbox(load_template("node"), limits=Limits(test_case_timeout=CASE_TIMEOUT)) as sb:
        await sb.sync(NODE_HANG)
        start = time.monotonic()
        report = await sb.run_tests(timeout=RUN_TIMEOUT)
        assert time.monotonic() - start < 30 and not report.timed_out
    assert report.passed == 1 and report.errors == 1
    [failure] = report.failures
    assert failure.test_id == "test/spin.test.js" and "timed out after 2000ms" in failure.message


@pytest.mark.docker
async def test_a_node_run_killed_at_its_timeout_is_not_green(request: pytest.FixtureRequest) -> None:
    # bookworm's node 18 has no --test-timeout; its streamed TAP report stops with only the passing file
    request.getfixturevalue("docker_images")
    async with DockerSandbox(load_template("node"), limits=Limits(test_case_timeout=CASE_TIMEOUT)) as sb:
        await sb.sync(NODE_HANG)
        report = await sb.run_tests(timeout=6)
        assert "no per-test timeout for node" in sb.note
    assert report.timed_out and not report.green and report.passed == 1
    assert report.failures[0].test_id == "<test run>" and "timed out after" in report.failures[0].message


async def test_a_host_without_the_per_test_timeout_runs_tests_and_says_so() -> None:
    template = replace(load_template("python"), case_timeout_probe="python3 -c 'import no_such_timeout_plugin'")
    async with LocalSandbox(template, limits=Limits(test_case_timeout=CASE_TIMEOUT)) as sb:
        await sb.sync({"test_ok.py": b"def test_ok():\n    assert 1\n"})
        report = await sb.run_tests()
        assert report.green  # no `--timeout` the host's pytest would not know
        assert "no per-test timeout" in sb.note and "hung test runs until" in sb.note


# cargo test in the rust image, a test in `loop {}`, killed at a 90 s run timeout (libtest warns at 60 s)
CARGO_KILLED = """   Compiling hang v0.1.0 (/workspace)
    Finished test [unoptimized + debuginfo] target(s) in 2.55s
     Running unittests src/lib.rs (/home/sandbox/target/debug/deps/hang-10814875dea2bceb)

running 2 tests
test tests::fine ... ok
test tests::hangs has been running for over 60 seconds

Killed
"""


def test_a_rust_test_still_running_when_the_run_is_killed_is_named() -> None:
    report = parse_report("libtest", ParseInput(output=CARGO_KILLED, exit_code=137))
    assert (report.passed, report.errors) == (1, 1)
    [failure] = report.failures
    assert failure.test_id == "tests::hangs" and "still running" in failure.message
