"""Record/replay: a recorded session reruns offline, exactly, by request hash."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from greenloop.errors import GreenloopError
from greenloop.llm import CallRecord, Cassette, LLMError, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.timeout(30)
ASK = [{"role": "user", "content": "plan"}]


class Step(BaseModel):
    name: str


async def session(settings: Settings, cassette: Cassette, records: list[CallRecord]) -> list[object]:
    async with open_llm(settings, sink=records.append, cassette=cassette) as llm:
        return [
            await llm.complete(ASK, step="diagnosis"),
            await llm.structured(ASK, Step, step="plan"),
            "".join([d async for d in llm.stream(ASK, step="explain")]),
            await llm.complete(ASK, step="diagnosis"),
        ]


async def test_a_recorded_session_replays_offline_exactly(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, tmp_path: Path
) -> None:
    scripted_llm.reject_response_format(status=500)
    scripted_llm.script("first", "second", step="diagnosis")
    scripted_llm.script("not json", '{"name": "fix"}', step="plan")
    scripted_llm.script("streamed words", step="explain")
    path = tmp_path / "session.jsonl"
    live: list[CallRecord] = []
    recorded = await session(scripted_settings, Cassette.record(path), live)
    scripted_llm.stop()  # replay must not need the server
    # a new client does not know the endpoint's mode; replay re-walks the fallback
    replayed_records: list[CallRecord] = []
    replayed = await session(scripted_settings, Cassette.replay(path), replayed_records)
    assert replayed == recorded == ["first", Step(name="fix"), "streamed words", "second"]
    assert [(r.step, r.outcome, r.prompt_tokens, r.reply) for r in replayed_records] == [
        (r.step, r.outcome, r.prompt_tokens, r.reply) for r in live]
    assert all(r.cached for r in replayed_records)


async def test_replay_of_an_unrecorded_request_fails_clearly(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, tmp_path: Path
) -> None:
    scripted_llm.script("yes", step="a")
    path = tmp_path / "c.jsonl"
    async with open_llm(scripted_settings, cassette=Cassette.record(path)) as llm:
        await llm.complete(ASK, step="a")
    async with open_llm(scripted_settings, cassette=Cassette.replay(path)) as llm:
        with pytest.raises(LLMError, match="has no reply for this 'a' request"):
            await llm.complete([{"role": "user", "content": "something else"}], step="a")


async def test_replay_needs_no_endpoint_at_all(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    recorder = Settings(llm={"base_url": scripted_llm.base_url}, local_model={"enabled": False})
    scripted_llm.script("hello", step="a")
    path = tmp_path / "c.jsonl"
    async with open_llm(recorder, cassette=Cassette.record(path)) as llm:
        await llm.complete(ASK, step="a")
    offline = Settings(local_model={"enabled": False})
    async with open_llm(offline, cassette=Cassette.replay(path)) as llm:
        assert await llm.complete(ASK, step="a") == "hello"


def test_broken_or_missing_cassette_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GreenloopError, match="does not exist"):
        Cassette.replay(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "x"}\nnot json\n')
    with pytest.raises(GreenloopError, match="line 1 is broken"):
        Cassette.replay(bad)


async def test_the_record_and_replay_flags_reach_every_client(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--record-llm` / `--replay-llm` become `llm.cassette`, which `open_llm` honours for any caller."""
    from greenloop.cli.common import common_parser, settings_from_args

    monkeypatch.chdir(tmp_path)
    scripted_llm.script("recorded reply", step="a")
    base = ["--base-url", scripted_llm.base_url]
    record = settings_from_args(common_parser().parse_args([*base, "--record-llm", "s.jsonl"]), None)
    assert (record.llm.cassette, record.llm.cassette_mode) == (str(tmp_path / "s.jsonl"), "record")
    async with open_llm(record) as llm:
        assert await llm.complete(ASK, step="a") == "recorded reply"
    scripted_llm.stop()
    replay = settings_from_args(common_parser().parse_args([*base, "--replay-llm", "s.jsonl"]), None)
    records: list[CallRecord] = []
    async with open_llm(replay, sink=records.append) as llm:
        assert await llm.complete(ASK, step="a") == "recorded reply"
    assert [r.cached for r in records] == [True]
    with pytest.raises(SystemExit):
        common_parser().parse_args(["--record-llm", "a", "--replay-llm", "b"])


async def test_every_client_of_a_recorded_command_lands_in_the_recording(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """A run opens several clients (a bench's shared model, then one per cell): none may truncate the others."""
    from greenloop.cli.common import common_parser, settings_from_args

    path = tmp_path / "s.jsonl"
    path.write_text("stale line from an older session\n")
    scripted_llm.script("one", step="a")
    scripted_llm.script("two", step="b")
    args = ["--base-url", scripted_llm.base_url, "--record-llm", str(path)]
    record = settings_from_args(common_parser().parse_args(args), None)  # starts the file fresh
    for step in ("a", "b"):
        async with open_llm(record) as llm:
            await llm.complete(ASK, step=step)
    scripted_llm.stop()
    replay = settings_from_args(common_parser().parse_args(["--replay-llm", str(path)]), None)
    async with open_llm(replay) as llm:
        assert [await llm.complete(ASK, step="a"), await llm.complete(ASK, step="b")] == ["one", "two"]


async def test_memo_asks_the_model_once_per_request_and_never_keeps_an_error(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, tmp_path: Path
) -> None:
    scripted_llm.script("one", "two", step="a")
    scripted_llm.script(Reply(status=401, error="scripted refusal"), "answered", step="b")
    path = tmp_path / "memo.jsonl"
    other = [{"role": "user", "content": "other"}]
    first: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=first.append, cassette=Cassette(path, "memo")) as llm:
        assert await llm.complete(ASK, step="a") == "one"
        with pytest.raises(LLMError, match="API key"):
            await llm.complete(other, step="b")
    again: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=again.append, cassette=Cassette(path, "memo")) as llm:
        assert await llm.complete(ASK, step="a") == "one"  # served: the server is not asked again
        assert await llm.complete([{"role": "user", "content": "new"}], step="a") == "two"  # asked
        assert await llm.complete(other, step="b") == "answered"  # the error was not kept: asked again
    assert (len(scripted_llm.requests_for("a")), len(scripted_llm.requests_for("b"))) == (2, 2)
    assert [r.cached for r in first] == [False, False]
    assert [r.cached for r in again] == [True, False, False]


async def test_memo_charges_a_served_reply_the_seconds_the_model_took(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, tmp_path: Path
) -> None:
    """A bench served from the memo compares its time with a config that asked the model."""
    scripted_llm.script(Reply("slow", delay=0.6), step="a")
    path = tmp_path / "memo.jsonl"
    first: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=first.append, cassette=Cassette(path, "memo")) as llm:
        assert await llm.complete(ASK, step="a") == "slow"
        assert llm.usage.served_seconds == 0.0  # asked: the seconds are the wall's own
    again: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=again.append, cassette=Cassette(path, "memo")) as llm:
        assert await llm.complete(ASK, step="a") == "slow"
        charged = llm.usage.served_seconds
    assert len(scripted_llm.requests_for("a")) == 1
    assert first[0].recorded_seconds is None and first[0].latency >= 0.6
    assert again[0].cached and again[0].recorded_seconds is not None
    assert again[0].recorded_seconds >= 0.6 and again[0].latency < 0.6
    assert charged == pytest.approx(again[0].recorded_seconds - again[0].latency)
