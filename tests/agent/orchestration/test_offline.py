"""Tests that fail only because the sandbox has no network: left out of the run, said, never targeted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import Message
from greenloop.agent.orchestration.describe import describe
from greenloop_sandbox import TestCase, TestFailure, TestReport
from greenloop_sandbox.offline import leave_out, needs_network
from tests.agent.conftest import collect, write_project

URLLIB = ("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>")
REQUESTS = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.invalid', port=443): Max retries "
            "exceeded (Caused by NameResolutionError(\"Failed to resolve 'api.invalid'\"))")
NODE = "Error: getaddrinfo ENOTFOUND registry.invalid"


def test_name_resolution_and_unreachable_network_errors_are_the_sandbox_not_the_code() -> None:
    for text in (URLLIB, REQUESTS, NODE, "OSError: [Errno 101] Network is unreachable"):
        assert needs_network(TestFailure(test_id="t", message="E", traceback=text)), text
    for text in ("AssertionError: assert 2 == 3", "ConnectionRefusedError: [Errno 111] Connection refused",
                 "KeyError: 'network'"):
        assert not needs_network(TestFailure(test_id="t", message=text)), text


def test_a_left_out_failure_counts_as_skipped_and_the_others_stay() -> None:
    report = TestReport(passed=3, failed=2, errors=1, failures=[
        TestFailure(test_id="a", message=URLLIB), TestFailure(test_id="b", message="assert 1 == 2"),
        TestFailure(test_id="c", kind="error", message=NODE)],
        cases=[TestCase(test_id="a", outcome="failed"), TestCase(test_id="b", outcome="failed"),
               TestCase(test_id="c", outcome="error"), TestCase(test_id="d", outcome="passed")])
    out = leave_out(report, ["a", "c", "not-there"])
    assert (out.passed, out.failed, out.errors, out.skipped) == (3, 1, 0, 2)
    assert [f.test_id for f in out.failures] == ["b"]
    assert [c.outcome for c in out.cases] == ["skipped", "failed", "skipped", "passed"]
    assert leave_out(report, ["x"]) is report


@pytest.mark.docker
async def test_a_test_that_needs_the_network_is_left_out_and_the_real_bug_is_fixed(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # youtube-dl: 41 of 50 failures were downloads in a sandbox without network, and the loop went after
    # the downloader. `.invalid` never resolves anywhere; in the sandbox (network none) nothing is sent.
    ws = write_project(tmp_path / "ws", {
        "calc.py": "import urllib.request\n\n\ndef add(a, b):\n    return a - b\n\n\n"
                   "def fetch():\n    return urllib.request.urlopen('http://greenloop.invalid/', timeout=5).read()\n",
        "test_calc.py": "from calc import add, fetch\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                        "def test_fetch():\n    assert fetch()\n",
    })
    scripted_llm.script("```python\ndef add(a, b):\n    return a + b\n```\n", step="repair_function")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"strategy": "candidates"})))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    [said] = [e for e in events if isinstance(e, Message) and "need the network" in e.text]
    assert "test_calc.py::test_fetch" in said.text and said.level == "warning"
    assert "skipped" in done.summary and "1 passed" in done.summary
    asked = scripted_llm.requests_for("repair_function")[0].messages[-1]["content"]
    assert "The code to fix: `add` in `calc.py`" in asked
    assert "Temporary failure in name resolution" not in asked  # the network test is not the model's problem


@pytest.mark.docker
async def test_when_every_failure_needs_the_network_none_is_left_out(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "net.py": "import urllib.request\n\n\ndef fetch():\n"
                  "    return urllib.request.urlopen('http://greenloop.invalid/', timeout=5).read()\n",
        "test_net.py": "from net import fetch\n\n\ndef test_fetch():\n    assert fetch()\n",
    })
    scripted_llm.script("```python\ndef fetch():\n    return b'x'\n```\n", step="repair_function")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"strategy": "candidates",
                                                                             "max_iterations": 1})))
    assert not any(isinstance(e, Message) and "need the network" in e.text for e in events)
    assert done.outcome != "already_green"  # a run is never green by leaving its only failures out
