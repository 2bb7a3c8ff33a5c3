"""llm.stop_repeats: a reply that loops verbatim is stopped, trimmed to one copy, and said so."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from greenloop.llm import CallRecord, StructuredOutputError, open_llm
from greenloop.llm.repeats import LoopWatch, loop_start, trim_loop
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM

HI = [{"role": "user", "content": "write the interfaces"}]
# What Qwen2.5-Coder 0.5B sent for a temperature converter's interfaces, 47 times over
BLOCK = (
    "## tests/test_temperature.py\n\n## celsius_to_fahrenheit\n```\n\n## fahrenheit_to_celsius\n```\n\n"
    "## kelvin_to_celsius\n```\n\n## Data\n```\n## Temperature data\n```\n\n"
)
HEAD = "## temperature.py\n- `to_f(c: float) -> float`: Celsius to Fahrenheit\n\n"
LOOPED = HEAD + BLOCK * 47


def _settings(base: Settings, stop_repeats: bool) -> Settings:
    return base.model_copy(update={"llm": base.llm.model_copy(update={"stop_repeats": stop_repeats})})


def test_a_looped_reply_is_cut_to_its_head_and_one_copy() -> None:
    trimmed = trim_loop(LOOPED)
    assert trimmed.startswith(HEAD) and trimmed.count("## kelvin_to_celsius") == 1
    assert len(trimmed) < len(HEAD) + 2 * len(BLOCK)


def test_text_that_only_resembles_itself_is_not_a_loop() -> None:
    # similar lines, a short run of one character, a table: real replies that must stay whole
    tests = "".join(f"def test_case_{n}():\n    assert add({n}, 1) == {n + 1}\n\n" for n in range(60))
    table = "| a | b |\n|---|---|\n" + "".join(f"| {n} | {n * n} |\n" for n in range(80))
    rule = "x = 1\n" + "-" * 79 + "\ny = 2\n"
    for text in (tests, table, rule, LOOPED[:700]):
        assert loop_start(text) is None and trim_loop(text) == text
        watch = LoopWatch()
        assert not any(watch.looping(text[i : i + 4]) for i in range(0, len(text), 4))


def test_the_watch_sees_a_loop_soon_after_it_starts() -> None:
    watch = LoopWatch()
    seen = next(i for i in range(0, len(LOOPED), 4) if watch.looping(LOOPED[i : i + 4]))
    assert seen < len(HEAD) + 8 * len(BLOCK) < len(LOOPED) // 5


async def test_a_looping_reply_is_stopped_and_the_server_told(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # paced like a local model; unstopped it would stream all 47 copies in about 4.5 s, which leaves
    # the client seconds to hang up after the stop, even on a loaded machine (at 0.9 s it once did not)
    scripted_llm.script(Reply(LOOPED, chunk_delay=0.01), step="generate_interfaces")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        text = await llm.complete(HI, step="generate_interfaces")
    assert text.startswith(HEAD) and text.count("## kelvin_to_celsius") == 1
    (record,) = records
    assert record.finish_reason == "repetition" and record.outcome == "ok"
    assert len(record.reply) < len(LOOPED) // 5  # what was received before the stop
    (request,) = scripted_llm.requests
    assert request.stream and request.aborted  # the connection closed: llama.cpp stops generating


async def test_without_stop_repeats_the_loop_runs_to_its_end(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(LOOPED, step="generate_interfaces")
    records: list[CallRecord] = []
    async with open_llm(_settings(scripted_settings, False), sink=records.append) as llm:
        assert await llm.complete(HI, step="generate_interfaces") == LOOPED
    assert records[0].finish_reason == "stop" and not scripted_llm.requests[0].stream


class Steps(BaseModel):
    steps: list[str]


async def test_a_looping_structured_reply_is_asked_again_afresh_with_the_reason(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # shown its looping plan, Qwen2.5-Coder 0.5B sent the same 437 tokens back on every repair
    looping = '{"steps": [' + '"add the missing import to calc.py and rerun the tests", ' * 60
    scripted_llm.script(looping, json.dumps({"steps": ["add the import"]}), step="debug_plan")
    async with open_llm(scripted_settings) as llm:
        assert (await llm.structured(HI, Steps, step="debug_plan")).steps == ["add the import"]
    first, again = scripted_llm.requests
    assert [m["role"] for m in again.messages] == [m["role"] for m in first.messages]
    assert not any("add the missing import" in m["content"] for m in again.messages)
    assert "It repeated itself and was cut off" in again.messages[-1]["content"]
    assert again.messages[-1]["content"].startswith(first.messages[-1]["content"])
    assert again.body["seed"] != first.body["seed"]


async def test_a_structured_reply_that_keeps_looping_fails_clearly(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script('{"steps": [' + '"same", ' * 400, step="debug_plan")
    async with open_llm(scripted_settings) as llm:
        with pytest.raises(StructuredOutputError, match="repeated itself"):
            await llm.structured(HI, Steps, step="debug_plan")
