"""Each test's own timeout (what it took when it passed) and the early stop, in both backends."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from greenloop_sandbox import (
    DockerSandbox,
    EarlyStop,
    Limits,
    LocalSandbox,
    Sandbox,
    load_template,
    run_spectrum,
)
from greenloop_sandbox.case_times import FLOOR, CaseTimes, early_stop, limit
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]
CAP = 4.0

# bitcount with `n ^= n - 1` (it should be `&=`): every test loops forever
LOOPS = b"def bitcount(n):\n    count = 0\n    while n:\n        n ^= n - 1\n        count += 1\n    return count\n"
FIXED = LOOPS.replace(b"^=", b"&=")
TESTS = b"from bitcount import bitcount\n\n" + b"".join(
    f"\ndef test_{n}():\n    assert bitcount({n}) == {bin(n).count('1')}\n\n".encode() for n in (127, 128, 13, 14, 27))
# a slow test that passes: no hang, whatever the others do
SLOW = b"import time\n\n\ndef test_fast():\n    assert 1\n\n\ndef test_slow():\n    time.sleep(1.6)\n"


@pytest.fixture
async def sandbox(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[Sandbox]:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    cls = DockerSandbox if backend == "docker" else LocalSandbox
    async with cls(load_template("python"), limits=Limits(test_case_timeout=CAP, test_timeout=120)) as sb:
        yield sb


def _limits(report: TestReport) -> list[str]:
    return [f.message.split("Timeout")[-1].strip(" (>)") for f in report.failures]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_looping_bug_costs_the_cap_once_then_the_floor_and_a_candidate_stops_at_its_first_hang(
    sandbox: Sandbox,
) -> None:
    await sandbox.sync({"bitcount.py": LOOPS, "tests/test_bitcount.py": TESTS})
    start = time.monotonic()
    first = await sandbox.run_tests()
    assert first.failed == 5 and all("Timeout" in f.message for f in first.failures)
    # nothing known: the first hang waits for the cap; then the code loops, and no test passed: the floor
    assert _limits(first)[0].startswith("4") and all(x.startswith("1") for x in _limits(first)[1:])
    assert time.monotonic() - start < CAP + 5 * FLOOR + 12
    assert any(f"bitcount.py:{n}: " in first.failures[1].traceback for n in (3, 4, 5))  # where it hung

    ids = [f.test_id for f in first.failures]
    start = time.monotonic()
    again = await sandbox.run_tests(ids, stop=early_stop(first, whole=False))
    assert time.monotonic() - start < 2 * FLOOR + 12
    assert again.failed == 5 and "Timeout" in again.failures[0].message
    assert all(f.message.startswith("not run: the run stopped early") and "hung again" in f.message
               for f in again.failures[1:])

    await sandbox.sync({"bitcount.py": FIXED, "tests/test_bitcount.py": TESTS})
    fixed = await sandbox.run_tests(ids, stop=early_stop(first, whole=False))
    assert fixed.green and fixed.passed == 5  # a fix is not cut short: the early stop waits for a hang
    assert set(sandbox.case_times.took) == set(ids) and not sandbox.case_times.hung


@pytest.mark.parametrize("backend", [pytest.param("docker", marks=pytest.mark.docker)])  # coverage: in the image
async def test_the_coverage_pass_takes_the_same_limits_and_runs_one_test_that_loops_again(sandbox: Sandbox) -> None:
    await sandbox.sync({"bitcount.py": LOOPS, "tests/test_bitcount.py": TESTS})
    first = await sandbox.run_tests()
    ids = [f.test_id for f in first.failures]
    start = time.monotonic()
    spectrum = await run_spectrum(sandbox, ids, seconds=10)
    assert time.monotonic() - start < 2 * FLOOR + 15  # not 5 x 4 s: once one hangs again, the rest are not run
    assert len(spectrum.tests) == 1, spectrum.note
    [looped] = spectrum.tests
    assert looped.test_id == ids[0] and looped.outcome == "failed" and looped.lines.get("bitcount.py")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_slow_passing_test_keeps_the_cap_on_a_first_run_and_twenty_times_its_time_after(
    sandbox: Sandbox,
) -> None:
    await sandbox.sync({"test_slow.py": SLOW})
    first = await sandbox.run_tests()
    assert first.green and first.passed == 2  # 1.6 s: over the floor, but nothing known yet
    took = sandbox.case_times.took
    assert took["test_slow.py::test_slow"] >= 1.5
    # a regression that makes the fast test loop ends at the floor, not the cap
    await sandbox.sync({"test_slow.py": SLOW.replace(b"assert 1", b"while True: pass")})
    start = time.monotonic()
    hung = await sandbox.run_tests()
    assert time.monotonic() - start < CAP + 8 and hung.passed == 1
    assert _limits(hung) == ["1.0s"] or _limits(hung)[0].startswith("1")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_whole_suite_run_stops_once_more_tests_fail_than_in_the_state(sandbox: Sandbox) -> None:
    tests = b"".join(f"def test_{i}():\n    assert {i} < 2\n\n".encode() for i in range(6))
    await sandbox.sync({"test_many.py": tests})
    report = await sandbox.run_tests(stop=EarlyStop(max_failures=1))
    assert (report.passed, report.failed) == (2, 4)  # every test is in the report
    assert [f.message.startswith("not run:") for f in report.failures] == [False, False, True, True]
    assert "2 tests failed, more than the 1 of the best state so far" in report.failures[-1].message


def test_the_rule() -> None:
    assert limit(None, 15) == 15 and limit(None, 15, looped=True) == FLOOR
    assert limit(0.001, 15) == FLOOR and limit(0.2, 15) == 4.0 and limit(2.0, 15) == 15
    assert limit(0.2, 15, factor=0) == 15 and limit(0.2, 0) == 0  # off: the cap; no cap: none
    times = CaseTimes()
    times.record(TestReport(passed=2, failed=1, cases=[
        TestCase(test_id="a", outcome="passed", duration=0.01), TestCase(test_id="b", outcome="passed", duration=0.3),
        TestCase(test_id="c", outcome="failed", duration=1.0)],
        failures=[TestFailure(test_id="c", message="Failed: Timeout (>1.0s) from pytest-timeout.")]))
    assert times.took == {"a": 0.01, "b": 0.3} and times.hung == {"c"}
    assert times.run_limit(["a"], 15) == FLOOR and times.run_limit(["a", "b"], 15) == 6.0
    # c never passed: the suite's median (0.155 s) x 20; which tests run unknown: the cap
    assert times.run_limit(["c"], 15) == pytest.approx(3.1) and times.run_limit(None, 15) == 15
    data = times.payload(["a"], 15, EarlyStop(max_failures=3, hung=("c",)))
    assert data["took"] == {"a": 0.01} and data["stop_on_hang"] == ["c"] and data["max_failures"] == 3
    state = TestReport(failed=2, errors=1, failures=[TestFailure(test_id="c", message="Failed: Timeout >2s"),
                                                     TestFailure(test_id="d", message="assert 1 == 2")])
    assert early_stop(state, whole=True) == EarlyStop(max_failures=3)  # the run that decides: counted only
    assert early_stop(state, whole=False) == EarlyStop(hung=("c",))


@pytest.mark.parametrize("backend", [pytest.param("docker", marks=pytest.mark.docker)])
async def test_the_limits_reach_the_runner_after_the_container_is_replaced(sandbox: Sandbox) -> None:
    await sandbox.sync({"bitcount.py": LOOPS, "tests/test_bitcount.py": TESTS})
    first = await sandbox.run_tests(["tests/test_bitcount.py::test_127"])
    assert _limits(first) == ["4.0s"] or _limits(first)[0].startswith("4")
    assert (await sandbox.run_setup("true")).ok  # a setup layer: a new container, without the limits file
    again = await sandbox.run_tests(["tests/test_bitcount.py::test_127"])
    assert _limits(again)[0].startswith("1")  # it hung before: the floor, so the runner read the limits
