"""A small edit's green and the model's own round on the same failure (repair/own_round.py), with a real sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateAsked, CandidateTested, Message
from greenloop.agent.repair.own_round import ALIKE, OTHER
from tests.agent.conftest import collect, write_project
from tests.support.scripted_llm import slow

ADULT = "def is_adult(age):\n    return age > 18\n"
ADULT_TESTS = ("from people import is_adult\n\n\ndef test_eighteen():\n    assert is_adult(18)\n\n\n"
               "def test_seventeen():\n    assert not is_adult(17)\n")


def reply(body: str) -> str:
    return f"```python\ndef is_adult(age):\n{body}```\n"


async def run(tmp_path: Path, scripted_llm: Any, make_settings: Any, *replies: Any, **loop: Any) -> tuple[list[Any], Any]:
    ws = write_project(tmp_path / "p", {"people.py": ADULT, "test_people.py": ADULT_TESTS})
    scripted_llm.script(*replies, step="repair_function")
    settings = make_settings(ws, loop={"small_edits": 60, "candidates": 1, **loop})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    green = next(i for i, e in enumerate(events) if isinstance(e, CandidateTested) and e.green)
    assert events[green].route == "small_edits"  # the small edit went green first, before any model call
    assert all(e.route == "small_edits" for e in events[:green] if isinstance(e, CandidateAsked))
    return events, done


@pytest.mark.docker
async def test_a_small_edit_and_a_different_model_green_the_rules_choice_is_offered_and_the_other_beside_it(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the model's green passes the tests but not what they stand for: 100 and over are not adults to it
    _, done = await run(tmp_path, scripted_llm, make_settings, reply("    return 18 <= age < 100\n"))
    # neither is risky, each is one candidate's, and they give other outcomes on variants of the tests' calls
    # (age 187, 18003): the smaller change (the small edit) is offered, but only as plausible, since the
    # model's own round made another change; that one is shown beside it
    assert done.changes.kind != "model" and done.changes.files[0].after == ADULT.replace(">", ">=")
    assert (done.changes.risk, done.changes.risk_reason) == ("plausible", OTHER)
    assert done.changes.other_kind == "model" and "+    return 18 <= age < 100" in done.changes.other_diff
    assert "another green change (model) is shown beside it" in done.changes.label


@pytest.mark.docker
async def test_a_small_edit_whose_model_green_is_written_otherwise_but_behaves_alike_is_done(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    _, done = await run(tmp_path, scripted_llm, make_settings, reply("    return not age < 18\n"))
    # another syntax tree, the same outcome on the tests' calls and on 200 variants of them: the same fix
    assert done.changes.kind != "model" and done.changes.files[0].after == ADULT.replace(">", ">=")
    assert (done.changes.risk, done.changes.label, done.changes.other_kind) == ("", "", "")
    assert done.changes.reason == ALIKE


@pytest.mark.docker
async def test_a_small_edit_the_models_own_round_makes_too_is_done(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    _, done = await run(tmp_path, scripted_llm, make_settings, reply("    return age >= 18\n"))
    assert done.changes.kind != "model" and done.changes.files[0].after == ADULT.replace(">", ">=")
    assert (done.changes.risk, done.changes.label, done.changes.other_kind) == ("", "", "")
    assert done.changes.reason == "the model's own round made the same change"
    assert len(scripted_llm.requests_for("repair_function")) == 1


@pytest.mark.docker
async def test_a_small_edit_whose_model_green_is_risky_is_done_with_the_model_green_beside_it(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    cased = reply("    if age == 18:\n        return True\n    return age > 18\n")  # special-cases the test's 18
    _, done = await run(tmp_path, scripted_llm, make_settings, cased)
    assert done.changes.kind != "model" and (done.changes.risk, done.changes.label) == ("", "")
    assert done.changes.reason.startswith("the model's green compares with `18`, a value the failing test holds")
    assert done.changes.other_kind == "model"


@pytest.mark.docker
async def test_a_model_too_slow_for_its_own_round_is_said_and_the_small_edit_is_plausible(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    events, done = await run(tmp_path, scripted_llm, make_settings, slow(30, reply("    return age >= 18\n")),
                             own_round_seconds=2)
    said = [e.text for e in events if isinstance(e, Message)]
    assert any("did not end in 2 s (loop.own_round_seconds)" in t for t in said), said
    assert done.changes.risk == "plausible" and "the model was too slow" in done.changes.risk_reason
    assert done.seconds < 25  # the slow reply was not waited for


@pytest.mark.docker
async def test_with_the_own_round_off_a_small_edits_green_ends_the_run_as_before(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    _, done = await run(tmp_path, scripted_llm, make_settings, reply("    return not age < 18\n"), own_round=False)
    assert scripted_llm.requests_for("repair_function") == []
    assert (done.changes.risk, done.changes.other_kind) == ("", "")
