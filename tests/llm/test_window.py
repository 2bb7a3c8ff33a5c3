"""Context windows: requests that would not fit drop their earlier exchanges, or are refused unsent."""

from __future__ import annotations

import pytest

from greenloop.llm import ContextOverflow, LLMError, open_llm
from greenloop.llm.window import _estimate, fit_messages
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM

SYSTEM = {"role": "system", "content": "You fix tests."}
ASK = {"role": "user", "content": "The tests fail. " + "def f(x):\n    return x + 1\n" * 40}
REPLY = {"role": "assistant", "content": '{"actions": [' + '{"kind": "edit"}, ' * 60 + "]}"}
NOTE = {"role": "user", "content": "Some actions could not be applied: the search text is not in the file."}


async def test_a_request_that_fits_or_has_no_window_is_sent_as_it_is() -> None:
    convo = [SYSTEM, ASK, REPLY, NOTE]
    assert await fit_messages(convo, None, 2048, "plan") == convo
    assert await fit_messages(convo, _estimate(convo) + 100, 100, "plan") == convo


async def test_a_repair_that_would_not_fit_drops_the_replies_between_request_and_latest_note() -> None:
    second = {"role": "assistant", "content": '{"actions": []}'}
    convo = [SYSTEM, ASK, REPLY, NOTE, second, NOTE]
    without_first = [SYSTEM, ASK, second, NOTE]
    window = _estimate(without_first) + 10
    assert await fit_messages(convo, window, 10, "plan") == without_first  # the oldest exchange goes first
    bare = [SYSTEM, ASK, NOTE]
    assert await fit_messages(convo, _estimate(bare) + 10, 10, "plan") == bare


async def test_a_request_too_long_on_its_own_is_refused_with_what_to_do() -> None:
    window = _estimate([SYSTEM, ASK]) // 2
    with pytest.raises(ContextOverflow) as caught:
        await fit_messages([SYSTEM, ASK, REPLY, NOTE], window, 2048, "debug_plan")
    message = str(caught.value)
    assert f"context window of {window} tokens" in message and "'debug_plan'" in message
    assert "retrieval.context_tokens" in message and "llm.context_window" in message
    # room is kept for the reply: a request that fits only without it is refused too
    with pytest.raises(ContextOverflow):
        await fit_messages([SYSTEM, ASK], _estimate([SYSTEM, ASK]) + 5, 2048, "plan")


async def test_the_client_sends_what_fits_and_refuses_the_rest_unsent(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script("ok", step="plan")
    window = _estimate([SYSTEM, ASK, NOTE]) + 50
    settings = scripted_settings.model_copy(
        update={"llm": scripted_settings.llm.model_copy(update={"context_window": window, "max_tokens": 50})}
    )
    async with open_llm(settings) as llm:
        assert llm.context_window == window
        assert await llm.complete([SYSTEM, ASK, REPLY, NOTE], step="plan") == "ok"
        with pytest.raises(ContextOverflow):
            await llm.complete([SYSTEM, {**ASK, "content": ASK["content"] * 3}], step="plan")
    (sent,) = scripted_llm.requests
    assert sent.messages == [SYSTEM, ASK, NOTE]


async def test_the_server_s_own_count_decides_when_the_estimate_says_it_may_not_fit(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # the estimate carries a 25% margin for another model's tokenizer; llama.cpp's /tokenize needs none
    scripted_llm.script("ok", step="plan")
    convo = [SYSTEM, ASK]
    window = int(_estimate(convo) * 0.9) + 50  # fits by a real count, not by the estimate with its margin
    settings = scripted_settings.model_copy(
        update={"llm": scripted_settings.llm.model_copy(update={"context_window": window, "max_tokens": 50})}
    )
    async with open_llm(settings) as llm:
        with pytest.raises(ContextOverflow):  # no /tokenize on this server: the estimate decides
            await llm.complete(convo, step="plan")
        assert llm.tokenizer.available is False
    scripted_llm.tokenize = lambda text: len(text.split())  # now it has one
    async with open_llm(settings) as llm:
        assert await llm.complete(convo, step="plan") == "ok"
        assert llm.tokenizer.available is True
    assert [r.messages for r in scripted_llm.requests] == [convo]


async def test_a_server_s_own_too_long_refusal_is_a_context_overflow_asked_once(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # no llm.context_window for a server greenloop did not start: the server's 400 says it instead
    scripted_llm.script(Reply(status=400, error="request (8936 tokens) exceeds the available context size "
                              "(8192 tokens), try increasing it"), step="plan")
    async with open_llm(scripted_settings) as llm:
        with pytest.raises(ContextOverflow, match=r"llm\.context_window"):
            await llm.complete([SYSTEM, ASK], step="plan")
    assert len(scripted_llm.requests) == 1  # not retried: the same request cannot fit the next time


async def test_other_refusals_stay_plain_errors(scripted_llm: ScriptedLLM, scripted_settings: Settings) -> None:
    scripted_llm.script(Reply(status=400, error="messages: field required"), step="plan")
    async with open_llm(scripted_settings) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete([SYSTEM, ASK], step="plan")
    assert not isinstance(caught.value, ContextOverflow)
