"""Correctness verdicts of green fixes (bench/correctness.py): syntax trees, then a differential replay in Docker."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from greenloop.agent.ports import SandboxPort, open_sandbox_for
from greenloop.agent.repair.behaviour import PROBE
from greenloop.bench.correctness import changed, compare, faster, judge, patched, same_trees
from greenloop.settings import Settings

pytestmark = pytest.mark.docker

TESTS = """from factors import *


def test_factors():
    assert factorize(8) == [2, 2, 2]
    assert factorize(25) == [5, 5]
    assert factorize(70) == [2, 5, 7]
    assert factorize(57) == [3, 19]
    assert factorize(2) == [2]
    assert factorize(3 * 19 * 19) == [3, 19, 19]
"""
REFERENCE = '''import math


def factorize(n: int) -> list:
    """The prime factors of n, smallest first."""
    fact = []
    i = 2
    while i <= int(math.sqrt(n) + 1):
        if n % i == 0:
            fact.append(i)
            n //= i
        else:
            i += 1
    if n > 1:
        fact.append(n)
    return fact
'''
# the same behaviour, written another way: not the same tree, and it must come out `equivalent`
REWRITTEN = '''import math


def factorize(n: int) -> list:
    out = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n = n // d
        d += 1
    if n > 1:
        out.append(n)
    return out
'''
# the tests pass, but the loop runs to n instead of sqrt(n): O(n), a different fix
WIDENED = REFERENCE.replace("int(math.sqrt(n) + 1)", "int(n + 1)")
BUGGY = REFERENCE.replace("    if n > 1:\n        fact.append(n)\n", "")


@pytest.fixture
async def sandbox() -> AsyncIterator[SandboxPort]:
    settings = Settings(sandbox={"backend": "docker"}, local_model={"enabled": False})
    async with open_sandbox_for(settings, "python", label="test-correctness") as port:
        yield port


def tree(module: str) -> dict[str, str]:
    return {"factors.py": module, "test_factors.py": TESTS}


def test_same_trees_ignore_formatting_and_docstrings() -> None:
    spaced = REFERENCE.replace('    """The prime factors of n, smallest first."""\n', "").replace("n //= i", "n  //=  i")
    assert same_trees(tree(BUGGY), tree(spaced), tree(REFERENCE))
    assert not same_trees(tree(BUGGY), tree(WIDENED), tree(REFERENCE))
    assert changed(tree(BUGGY), tree(WIDENED)) == [("factors.py", "factorize")]


def test_the_reference_patch_leaves_crlf_and_binary_files_as_they_were() -> None:
    # a text round trip turned CRLF into LF and a PNG's bytes into others: every such file then differed
    # from the reference, and a fix equal to the developers' could not come out `same`
    buggy = {"pkg/mod.py": "def f():\n    return 1\n", "notes.patch": "a\r\nb\r\n",
             "logo.png": b"\x89PNG\r\n\x1a\n\xff\x00".decode("utf-8", "surrogateescape")}
    patch = ("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")
    reference = patched(buggy, patch)
    assert reference["notes.patch"] == buggy["notes.patch"] and reference["logo.png"] == buggy["logo.png"]
    fixed = {**buggy, "pkg/mod.py": "def f():\n    return 2  # the fix\n"}
    assert same_trees(buggy, fixed, reference)


async def test_rewrite_is_equivalent_and_widened_loop_differs(sandbox: SandboxPort) -> None:
    also = (("factors.py", "factorize"),)
    same = await judge(sandbox, tree(BUGGY), tree(REFERENCE), tree(REFERENCE), ["test_factors.py"])
    assert same.name == "same"
    rewritten = await judge(sandbox, tree(BUGGY), tree(REWRITTEN), tree(REFERENCE), ["test_factors.py"],
                            variants=200, also=also)
    assert rewritten.name == "equivalent", rewritten
    assert rewritten.calls >= 20
    widened = await judge(sandbox, tree(BUGGY), tree(WIDENED), tree(REFERENCE), ["test_factors.py"],
                          variants=200, also=also)
    assert widened.name == "differs", widened


async def test_none_guard_in_a_bool_function_differs(sandbox: SandboxPort) -> None:
    tests = "from check import *\n\n\ndef test_empty():\n    assert not is_empty_name(None)\n" + "".join(
        f"    assert is_empty_name({v!r}) is {r}\n" for v, r in (("", True), ("a", False), (" ", False)))
    buggy = "def is_empty_name(name):\n    return len(name) == 0\n"
    reference = "def is_empty_name(name):\n    if name is None:\n        return False\n    return len(name) == 0\n"
    guarded = "def is_empty_name(name):\n    if name is None:\n        return None\n    return len(name) == 0\n"
    files = {"test_check.py": tests}
    verdict = await judge(sandbox, {**files, "check.py": buggy}, {**files, "check.py": guarded},
                          {**files, "check.py": reference}, ["test_check.py"], variants=30,
                          also=(("check.py", "is_empty_name"),))
    assert verdict.name == "differs", verdict


async def test_capture_does_not_change_what_the_tests_see(sandbox: SandboxPort) -> None:
    """The same test results with the probe's capture on as with it off."""
    files = {p: t.encode() for p, t in tree(WIDENED).items()}
    files[".greenloop-probe/probe.py"] = PROBE.read_bytes()
    files["test_more.py"] = b"from factors import *\n\n\ndef test_fails():\n    assert factorize(9) == [9]\n"
    await sandbox.sync(files)
    off = await sandbox.run_command(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"], seconds=120)
    verdict = await judge(sandbox, tree(BUGGY), tree(REWRITTEN), tree(REFERENCE), ["test_factors.py"])
    assert verdict.name in ("equivalent", "unknown")
    await sandbox.sync(files)
    on = await sandbox.run_command(
        ["python3", "-m", "pytest", "-q", "-p", "probe", "-p", "no:cacheprovider"], seconds=120,
        env={"PYTHONPATH": ".greenloop-probe",
             "GREENLOOP_PROBE": '{"targets": [["factors.py", "factorize"]], "out": ".greenloop-probe/c.pkl"}'})
    assert off is not None and on is not None
    assert "1 failed, 1 passed" in off
    assert "1 failed, 1 passed" in on


def test_compare_leaves_out_calls_that_differ_between_two_reference_runs() -> None:
    ref = {i: {"i": i, "h": f"h{i}", "o": "returned", "s": 0.001} for i in range(25)}
    again = {**ref, 3: {"i": 3, "h": "other", "o": "returned", "s": 0.001}}
    fixed = {**ref, 3: {"i": 3, "h": "third", "o": "returned", "s": 0.001}}
    assert compare(ref, again, fixed).name == "equivalent"
    assert compare(ref, ref, fixed).name == "differs"
    assert compare(dict(list(ref.items())[:5]), ref, ref).name == "unknown"


def test_a_timeout_where_the_reference_is_slow_too_is_not_a_difference() -> None:
    ref = {i: {"i": i, "h": f"h{i}", "o": "returned", "s": 0.001} for i in range(25)}
    slow = {**ref, 7: {"i": 7, "h": "h7", "o": "returned", "s": 1.5}}  # near the 2 s timer
    fixed = {**ref, 7: {"i": 7, "h": "t", "o": "timeout", "s": 2.0}}
    assert compare(slow, slow, fixed).name == "equivalent"
    assert compare(ref, ref, fixed).name == "differs"


def test_a_slow_replay_checked_again_keeps_each_calls_faster_run() -> None:
    """One replay slowed by a busy machine (a timeout, 10x) is not the code: the second run's times count."""
    ref = {i: {"i": i, "h": f"h{i}", "o": "returned", "s": 0.01} for i in range(25)}
    busy = {i: {**row, "s": 0.1} for i, row in ref.items()} | {3: {"i": 3, "h": "t", "o": "timeout", "s": 2.0}}
    calm = {i: {**row, "s": 0.011} for i, row in ref.items()}
    assert compare(ref, ref, busy).name == "differs"
    assert compare(ref, ref, faster(busy, calm)).name == "equivalent"
    widened = {i: {**row, "s": 0.5} for i, row in ref.items()}
    assert compare(ref, ref, faster(widened, {i: {**row, "s": 0.4} for i, row in ref.items()})).name == "differs"
