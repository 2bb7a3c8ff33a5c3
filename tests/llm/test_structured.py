"""Structured output: response_format fallbacks, JSON extraction, repair, and the clear final error."""

from __future__ import annotations

import json
import random
import string

import pytest
from pydantic import BaseModel

from greenloop.llm import CallRecord, LLMClient, StructuredOutputError, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(30)
ASK = [{"role": "system", "content": "You plan fixes."}, {"role": "user", "content": "plan it"}]


class Plan(BaseModel):
    diagnosis: str
    steps: list[str]
    confidence: float


def settings_for(base: Settings, **llm: object) -> Settings:
    return base.model_copy(update={"llm": base.llm.model_copy(update=llm)})


GOOD = {"diagnosis": "off by one", "steps": ["fix range"], "confidence": 0.8}


async def test_json_schema_is_sent_first_with_the_step_as_name(
    scripted_llm: ScriptedLLM, llm_client: LLMClient
) -> None:
    scripted_llm.script(GOOD, step="debug_plan")
    plan = await llm_client.structured(ASK, Plan, step="debug_plan")
    assert plan == Plan.model_validate(GOOD)
    rf = scripted_llm.requests[0].response_format
    assert rf is not None and rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "debug_plan"
    assert rf["json_schema"]["strict"] is False
    assert rf["json_schema"]["schema"] == Plan.model_json_schema()
    assert scripted_llm.requests[0].messages == ASK


@pytest.mark.parametrize("status", [400, 500])
async def test_rejected_json_schema_falls_back_to_json_object_without_burning_retries(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, status: int
) -> None:
    scripted_llm.reject_response_format(status=status)
    scripted_llm.script(GOOD, step="plan")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        assert await llm.structured(ASK, Plan, step="plan") == Plan.model_validate(GOOD)
        modes = [r.response_format["type"] for r in scripted_llm.requests if r.response_format]
        assert modes == ["json_schema", "json_object"]
        second = scripted_llm.requests[1]
        assert second.response_format and second.response_format["schema"] == Plan.model_json_schema()
        # the schema also goes at the end of the user message; the system message stays as it was,
        # so this call shares its opening tokens with the run's other calls (prompt caches)
        assert second.messages[0] == ASK[0]
        assert second.messages[1]["content"].startswith(ASK[1]["content"])
        assert "JSON schema" in second.messages[1]["content"]
        assert [m["role"] for m in second.messages] == ["system", "user"]
        # remembered for this endpoint: the next call goes straight to json_object
        await llm.structured(ASK, Plan, step="plan")
        assert scripted_llm.requests[2].response_format["type"] == "json_object"  # type: ignore[index]
    assert [(r.mode, r.outcome) for r in records] == [
        ("json_schema", "failed"), ("json_object", "ok"), ("json_object", "ok")]


async def test_server_rejecting_every_response_format_gets_the_schema_in_the_prompt(
    scripted_llm: ScriptedLLM, llm_client: LLMClient
) -> None:
    scripted_llm.reject_response_format(status=400, types=("json_schema", "json_object"))
    scripted_llm.script(GOOD, step="plan")
    await llm_client.structured(ASK, Plan, step="plan")
    last = scripted_llm.requests[-1]
    assert len(scripted_llm.requests) == 3
    assert last.response_format is None
    assert json.dumps(Plan.model_json_schema(), separators=(",", ":")) in last.messages[-1]["content"]
    assert llm_client.structured_mode == "prompt"


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! Here is the plan:\n```json\n" + json.dumps(GOOD) + "\n```\nHope it helps.",
        "The plan is " + json.dumps(GOOD) + " as requested.",
        '{"diagnosis": "off by one", "steps": ["fix range",], "confidence": "0.8",}',
    ],
    ids=["fenced", "prose-around", "trailing-commas-and-string-number"],
)
async def test_json_is_extracted_without_a_repair_round_trip(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, reply: str
) -> None:
    scripted_llm.script(reply, step="plan")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        assert await llm.structured(ASK, Plan, step="plan") == Plan.model_validate(GOOD)
    assert len(scripted_llm.requests) == 1
    assert records[0].outcome == "ok"


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ('{"diagnosis": "off by one", "steps": ["fix', "cut off"),
        ("I think the bug is in the loop.", "no JSON object"),
        ('{"diagnosis": "x", "steps": "not a list", "confidence": 1}', "steps: Input should be a valid list"),
        ('{"diagnosis": "x"}', "steps: Field required"),
        ("{'diagnosis': 'x', 'steps': [], 'confidence': 1,", "cut off"),
    ],
    ids=["truncated", "prose", "wrong-type", "missing-fields", "broken-python-literal"],
)
async def test_invalid_reply_is_sent_back_with_the_problem_and_repaired(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, bad: str, problem: str
) -> None:
    scripted_llm.script(bad, GOOD, step="plan")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        assert await llm.structured(ASK, Plan, step="plan") == Plan.model_validate(GOOD)
    repair = scripted_llm.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": bad}
    assert repair[-1]["role"] == "user" and problem in repair[-1]["content"]
    assert [(r.outcome, r.attempt) for r in records] == [("failed", 0), ("repaired", 1)]
    assert records[0].error and problem in records[0].error


async def test_gives_up_after_repair_attempts_with_every_raw_reply(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    replies = ["nope", '{"diagnosis": 1', "still prose"]
    scripted_llm.script(*replies, step="plan")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        with pytest.raises(StructuredOutputError, match=r"did not match Plan after 2 repair") as info:
            await llm.structured(ASK, Plan, step="plan")
    assert info.value.raw_replies == replies
    assert len(scripted_llm.requests) == 3  # repair_attempts = 2 by default
    assert [r.outcome for r in records] == ["failed"] * 3


async def test_huge_structured_reply_is_parsed(scripted_llm: ScriptedLLM, llm_client: LLMClient) -> None:
    rng = random.Random(7)  # distinct steps: identical ones would be a verbatim loop, stopped early
    big = {**GOOD, "steps": ["".join(rng.choices(string.ascii_letters, k=1000)) for _ in range(500)]}
    scripted_llm.script(big, step="plan")
    plan = await llm_client.structured(ASK, Plan, step="plan")
    assert len(plan.steps) == 500


async def test_a_request_asked_again_is_sampled_with_the_next_seed_and_hotter(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # at temperature 0.2 the 0.5B model answered a repeated request byte for byte the same, with the
    # same seed and with the next: every repair after the first was wasted. What is sent is recorded.
    scripted_llm.script("not json", "still not", GOOD, step="plan")
    scripted_llm.script("a", "b", step="file")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        await llm.structured(ASK, Plan, step="plan")
        await llm.structured(ASK, Plan, step="plan", attempt=2)  # the caller's third ask
        await llm.complete(ASK, step="file")
        await llm.complete(ASK, step="file", attempt=1)
    sent = [r.body["seed"] for r in scripted_llm.requests]
    assert sent == [1234, 1235, 1236, 1236, 1234, 1235]
    assert [r.seed for r in records] == sent
    temperatures = [r.body["temperature"] for r in scripted_llm.requests]
    assert temperatures == pytest.approx([0.2, 0.5, 0.8, 0.8, 0.2, 0.5])  # + llm.retry_temperature_step
    assert [r.temperature for r in records] == temperatures
    async with open_llm(settings_for(scripted_settings, temperature=0.9)) as llm:
        scripted_llm.script("c", step="file")
        await llm.complete(ASK, step="file", attempt=3)
    assert scripted_llm.requests[-1].body["temperature"] == 1.0  # capped
    assert [r.outcome for r in records] == ["failed", "failed", "repaired", "ok", "ok", "ok"]
