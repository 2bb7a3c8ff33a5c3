"""A green keeps only the earlier changes it needs (repair/trim.py): a fix run with a real sandbox and a model
scripted over HTTP, whose later reply is the oracle's (bench/oracle.py) reference fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import Message, RoundEnded
from greenloop.agent.repair.trim import Move, units, where, without
from greenloop.bench.oracle import answer
from greenloop.bench.oracle_fix import ReferenceFix
from greenloop.settings import load_settings
from tests.agent.conftest import collect, write_project

ROOT = Path(__file__).resolve().parents[3]

PICK = ("def pick(options, wanted):\n    for option in options:\n        if option.startswith(wanted):\n"
        "            return option\n    raise LookupError(f\"no option starts with {wanted!r}\")\n\n\n")
CHOOSE = ("def choose(options, wanted):\n    if not wanted:\n        return options[len(options) - 1]\n"
          "    return pick(options, wanted.upper())\n")
BUGGY = PICK + CHOOSE
FIXED = PICK + CHOOSE.replace("options[len(options) - 1]", "options[0]").replace("wanted.upper()", "wanted")
TESTS = ("from menu import choose\n\n\ndef test_prefix():\n    assert choose([\"apple\", \"box\"], \"ap\") == \"apple\"\n\n\n"
         "def test_empty():\n    assert choose([\"apple\", \"box\"], \"\") == \"apple\"\n")
# a reply to a request about `pick` alone: it matches whatever the case, which makes test_prefix pass (a move)
CASELESS = ("```python\ndef pick(options, wanted):\n    for option in options:\n"
            "        if option.lower().startswith(wanted.lower()):\n            return option\n"
            "    raise LookupError(f\"no option starts with {wanted!r}\")\n```\n")


def responder(fixed_text: str = FIXED) -> Any:
    """The oracle (its reference fix: `fixed_text`), but a request about `pick` alone gets the caseless reply."""
    fixed = ReferenceFix.of({"menu.py": BUGGY}, {"menu.py": fixed_text})

    def reply(request: dict[str, Any]) -> str:
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        return CASELESS if "## The code to fix: `pick`" in first else answer(fixed, request["messages"])

    return reply


async def run(tmp_path: Path, scripted_llm: Any, make_settings: Any, fixed_text: str = FIXED,
              **loop: Any) -> tuple[list[str], str]:
    """The fix run's messages and the diff offered as done; round 1 moved the state (`pick` made caseless)."""
    ws = write_project(tmp_path / "p", {"menu.py": BUGGY, "test_menu.py": TESTS})
    scripted_llm.script(responder(fixed_text))
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"candidates": 1, **loop})))
    assert done.outcome == "green", done.summary + done.evidence
    moved = [e for e in events if isinstance(e, RoundEnded) and e.moved]
    assert [e.iteration for e in moved][:1] == [1] and len(moved) == 2  # round 1 moved, a later round went green
    assert done.changes is not None and (tmp_path / "p" / "menu.py").read_text() == BUGGY  # the user's file as it was
    return [e.text for e in events if isinstance(e, Message)], done.changes.diff


@pytest.mark.docker
async def test_an_earlier_change_the_green_does_not_need_is_left_out(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    said, diff = await run(tmp_path, scripted_llm, make_settings)
    assert "Round 1's change to `pick` in menu.py is not needed for the tests to pass: left out." in said
    # the done diff is the developers' fix alone: no leftover of round 1's caseless match
    assert "lower()" not in diff and "+    return pick(options, wanted)\n" in diff and "+        return options[0]\n" in diff


@pytest.mark.docker
async def test_an_earlier_change_the_green_needs_stays(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    # the reference fix mends only the empty case: test_prefix passes only with round 1's caseless `pick`
    only_empty = PICK + CHOOSE.replace("options[len(options) - 1]", "options[0]")
    said, diff = await run(tmp_path, scripted_llm, make_settings, only_empty)
    assert "The green keeps round 1's change to `pick` in menu.py: the tests need it." in said
    assert "+        if option.lower().startswith(wanted.lower()):\n" in diff and "+        return options[0]\n" in diff
    assert not any("left out" in text for text in said)


@pytest.mark.docker
@pytest.mark.parametrize("off", [{"rungs_off": ["trim"]}, {"trim_tries": 0}], ids=["rungs_off", "no tries"])
async def test_trim_turned_off_offers_the_green_with_every_earlier_change(
    tmp_path: Path, scripted_llm: Any, make_settings: Any, off: dict[str, Any]
) -> None:
    said, diff = await run(tmp_path, scripted_llm, make_settings, **off)
    assert "+        if option.lower().startswith(wanted.lower()):\n" in diff  # round 1's change rides along
    assert not any("left out" in text or "The green keeps" in text for text in said)


def test_the_no_trim_ablation_turns_off_trimming_alone() -> None:
    path = ROOT / "benchmarks" / "configs" / "ablation" / "no-trim.toml"
    assert path.read_text().startswith("# ")  # its first line says what it removes
    loop, default = load_settings(None, {}, config_file=path).loop, load_settings(None, {}).loop
    assert loop.rungs_off == ["trim"] and loop.model_copy(update={"rungs_off": []}) == default


def test_a_small_edits_hunks_are_tried_alone_a_replys_together_and_none_the_green_touches(tmp_path: Path) -> None:
    original = "".join(f"line{n}\n" for n in range(1, 41))
    edited = original.replace("line2\n", "LINE2\n").replace("line15\n", "LINE15\n")  # round 1: small edits
    state = edited.replace("line28\n", "").replace("line36\n", "LINE36\n")  # round 2: a reply
    copy = WorkingCopy(tmp_path, {"m.py": original.encode(), "new.py": b""})
    copy.write("m.py", state)
    copy.write("new.py", "added = 1\n")  # a file the run had empty: its one hunk, in no move
    moves = [Move(1, {"m.py": edited.encode()}, whole=False), Move(2, {"m.py": state.encode()})]
    green = state.replace("line16\n", "line16 green\n")  # the green's own change, right next to LINE15
    tried = units(copy, {"m.py": green, "new.py": "added = 1\n"}, moves)
    assert [(who, [h.now for h in unit]) for who, unit in tried] == [
        ("round 1", [("LINE2\n",)]), ("round 2", [(), ("LINE36\n",)]), ("an earlier round", [("added = 1\n",)])]
    reply = tried[1][1]
    assert reply[0].was == ("line28\n",)  # a line the reply removed
    assert without(state, green, [*tried[0][1], *reply]) == green.replace("LINE2", "line2").replace(
        "line27\n", "line27\nline28\n").replace("LINE36", "line36")
    # the green touching one hunk of the reply: the reply is not tried at all
    touching = green.replace("line35\n", "line35 green\n")
    assert [who for who, _ in units(copy, {"m.py": touching}, moves)] == ["round 1"]
    assert where(reply[1], "def f():\n" + "    x = 1\n" * 40) == "`f`" and where(reply[1], "") == "lines 35-35"
