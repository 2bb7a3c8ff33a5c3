"""The choice among greens by what they change on the passing tests' calls (behaviour.py, second_look.choose)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.ports import SandboxPort, open_sandbox_for
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.behaviour import PROBE_DIR, changes_on_passing_calls
from greenloop.agent.repair.candidate_round import RoundResult, Tried
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.second_look import Green, choose
from greenloop.agent.repair.splice import Target
from greenloop.settings import Settings

BUGGY = "def sign(x):\n    return 1 if x > 0 else -1\n"
# both pass the tests; the second returns floats (1.0 == 1), which the passing tests cannot tell apart
RIGHT = "def sign(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n"
FLOATS = "def sign(x):\n    if x == 0:\n        return 0\n    return x / abs(x)\n"
TESTS = ("from signs import sign\n\n\ndef test_positive():\n    assert sign(5) == 1\n    assert sign(0.5) > 0\n\n\n"
         "def test_negative():\n    assert sign(-3) == -1\n\n\ndef test_zero():\n    assert sign(0) == 0\n")


def tree(module: str) -> dict[str, bytes]:
    return {"signs.py": module.encode(), "test_signs.py": TESTS.encode()}


@pytest.fixture
async def sandbox() -> AsyncIterator[SandboxPort]:
    settings = Settings(sandbox={"backend": "docker"}, local_model={"enabled": False})
    async with open_sandbox_for(settings, "python", label="test-behaviour") as port:
        yield port


@pytest.mark.docker
async def test_a_green_that_changes_a_passing_tests_call_counts_it_and_the_sandbox_is_left_as_it_was(
    sandbox: SandboxPort,
) -> None:
    counts = await changes_on_passing_calls(sandbox, tree(BUGGY), [tree(RIGHT), tree(FLOATS)],
                                            ["test_signs.py::test_zero"])
    assert counts == [0, 3]  # sign(5), sign(-3), sign(0.5): ints on the start and with RIGHT, floats with FLOATS
    listing = await sandbox.run_command(["ls", "-a"], seconds=30)
    assert listing is not None and PROBE_DIR not in listing
    assert await sandbox.run_command(["cat", "signs.py"], seconds=30) == BUGGY


@pytest.mark.docker
async def test_nothing_is_counted_when_no_python_definition_changed(sandbox: SandboxPort) -> None:
    notes = {**tree(BUGGY), "NOTES.md": b"changed\n"}
    assert await changes_on_passing_calls(sandbox, tree(BUGGY), [notes, notes], []) is None


def green(files: dict[str, bytes], lines: int, risk: str) -> Green:
    approach = Approach(FUNCTION, Target("signs.py", "sign", "function", 1, 2), "first choice")
    best = Tried(1, None, 0.0, "tested", diff_lines=lines, green=True)
    return Green(RoundResult(approach, (best,), best, "green", None, files), "model", risk)


def test_of_greens_alike_in_risk_and_votes_the_one_changing_fewer_passing_calls_is_kept() -> None:
    copy = WorkingCopy(Path("."), tree(BUGGY))
    smaller = green(tree(FLOATS), 2, "returns a float where the function otherwise returns an int")
    larger = green(tree(RIGHT), 3, "drops a statement")
    assert choose([smaller, larger], copy).result is smaller.result  # no counts: the smaller change
    kept = choose([smaller, larger], copy, [1, 0])
    assert kept.result is larger.result
    assert kept.reason == "it changes what the function gives on 0 of the passing tests' calls, the other green on 1"


def test_a_reply_that_copied_the_hinted_change_is_no_vote_for_it() -> None:
    # youtube-dl-25: the 1.5B model, shown the risky `re.match(v, regex)` swap, wrote that swap again, and the
    # loop said "2 independent candidates made this same change" of a change one candidate made
    copy = WorkingCopy(Path("."), tree(BUGGY))
    first = green(tree(FLOATS), 2, "returns a float where the function otherwise returns an int")
    again = replace(green(tree(FLOATS), 2, "keeps the change it was shown"), copied=True)
    kept = choose([first, again], copy)
    assert kept.result is first.result
    assert kept.reason == "the only green change: the model's round gave back the change it was shown"
    other = green(tree(RIGHT), 3, "")
    assert choose([first, again, other], copy).result is other.result  # not risky beats a copied vote
    assert choose([first, replace(again, copied=False)], copy).reason == "2 independent candidates made this same change"
