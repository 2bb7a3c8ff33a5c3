"""A function reply that gives the function back unchanged is stopped while it streams, and no other reply is.

The rule (FunctionForm.known_echo): the reply has closed the first code block that defines the target, and
that block gives it back as it is. Then the whole reply is read as unchanged whatever follows, so stopping
loses nothing; a reply whose change comes later in the def, or in a helper of the same block, is never stopped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.asks import Asking, RoundAsks
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.splice import Target
from greenloop.llm import CallRecord, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.timeout(60)

SOURCE = (
    "import os\n\n\n"
    "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n\n\n"
    "class Cart:\n    def count(self):\n        return len(self.items)\n"
)
TOTAL = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n"
PROSE = "".join(f"{n}. This function looks correct: point {n * 7} of the review holds.\n" for n in range(1, 13))
ECHO = f"The function:\n```python\n{TOTAL}```\n{PROSE}"
LATE_CHANGE = f"```python\n{TOTAL}    return result + 0 or 1\n```\n{PROSE}"  # a line more, after the last one
HELPER_AFTER = f"```python\n{TOTAL}\n\ndef helper():\n    return 1\n```\n{PROSE}"  # top level: the helper comes along
EDITED_LAST = f"```python\n{TOTAL.replace('return result', 'return result + 1')}```\n{PROSE}"
METHOD_ECHO = f"```python\nclass Cart:\n    def count(self):\n        return len(self.items)\n```\n{PROSE}"
UNFENCED_THEN_BLOCK = f"{TOTAL}\n```\n{TOTAL.replace('+=', '-=')}```\n"  # no closed block until the second fence


def approach_on(symbol: str, start: int, end: int) -> Approach:
    return Approach(FUNCTION, Target("shop.py", symbol, "function", start, end), "the top-ranked function")


@pytest.fixture
def copy(tmp_path: Path) -> WorkingCopy:
    return WorkingCopy(tmp_path, {"shop.py": SOURCE.encode()})


TOTAL_APPROACH = approach_on("total", 4, 8)
METHOD_APPROACH = approach_on("Cart.count", 12, 13)


def first_stop(approach: Approach, copy: WorkingCopy, reply: str) -> int | None:
    """Where the rule first holds, fed the reply a character at a time (None: never)."""
    return next((n for n in range(1, len(reply) + 1) if FUNCTION.known_echo(approach, copy, reply[:n])), None)


def test_an_echo_is_known_once_its_block_closes_and_not_a_line_before(copy: WorkingCopy) -> None:
    stop = first_stop(TOTAL_APPROACH, copy, ECHO)
    assert stop is not None and ECHO[:stop].endswith(f"{TOTAL}```\n")
    with pytest.raises(ReplyUnchanged):
        read_reply(TOTAL_APPROACH, copy, ECHO)
    assert first_stop(METHOD_APPROACH, copy, METHOD_ECHO) == METHOD_ECHO.index("```\n", 3) + 4


@pytest.mark.parametrize("reply", [LATE_CHANGE, HELPER_AFTER, EDITED_LAST, UNFENCED_THEN_BLOCK])
def test_a_reply_that_carries_a_change_is_never_stopped(copy: WorkingCopy, reply: str) -> None:
    assert first_stop(TOTAL_APPROACH, copy, reply) is None
    try:
        read_reply(TOTAL_APPROACH, copy, reply)
    except ReplyUnchanged:
        pytest.fail("the reply was meant to carry a change")
    except ReplyRejected:
        pass


def test_wherever_the_rule_holds_the_whole_reply_is_read_as_unchanged(copy: WorkingCopy) -> None:
    replies = [ECHO, LATE_CHANGE, HELPER_AFTER, EDITED_LAST, UNFENCED_THEN_BLOCK, METHOD_ECHO,
               f"```python\ndef other():\n    pass\n```\n{ECHO}", f"{ECHO}```python\n{TOTAL.replace('0', '1')}```\n"]
    for approach in (TOTAL_APPROACH, METHOD_APPROACH):
        for reply in replies:
            if first_stop(approach, copy, reply) is not None:
                with pytest.raises(ReplyUnchanged):
                    read_reply(approach, copy, reply)


async def test_an_echo_streamed_slowly_is_stopped_before_the_server_sent_it_all(
    copy: WorkingCopy, scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply(ECHO, chunk_size=12, chunk_delay=0.03), step="repair_function")
    records: list[CallRecord] = []
    form = TOTAL_APPROACH.form
    asking = Asking(step="repair_function", please=form.please(TOTAL_APPROACH),
                    echoes=lambda so_far: form.known_echo(TOTAL_APPROACH, copy, so_far), given=lambda index: False)
    async with open_llm(scripted_settings, sink=records.append) as llm:
        asks = RoundAsks(llm, [{"role": "user", "content": "fix total"}], lambda: 7, asking, None)
        answer = await asks.ask(7, 0.0)
    reply = answer.text
    # stopped at the delta that completed the closing fence's line: what came after it is a few characters
    assert f"{TOTAL}```\n" in reply and len(reply) < len(ECHO) - len(PROSE) + 12
    with pytest.raises(ReplyUnchanged):
        read_reply(TOTAL_APPROACH, copy, reply)
    (record,) = records
    assert record.finish_reason == "stopped" and answer.tokens == record.prompt_tokens + record.completion_tokens
    request = scripted_llm.requests[0]
    for _ in range(100):  # the server notices the closed connection at its next chunk
        if request.aborted:
            break
        await asyncio.sleep(0.02)
    assert request.aborted  # the client went away before the server had sent the prose


async def test_a_reply_with_a_late_change_streams_to_its_end(
    copy: WorkingCopy, scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply(LATE_CHANGE, chunk_size=40), step="repair_function")
    form = TOTAL_APPROACH.form
    asking = Asking(step="repair_function", please="",
                    echoes=lambda so_far: form.known_echo(TOTAL_APPROACH, copy, so_far), given=lambda index: False)
    async with open_llm(scripted_settings) as llm:
        answer = await RoundAsks(llm, [{"role": "user", "content": "fix total"}], lambda: 7, asking, None).ask(7, 0.0)
    assert answer.text == LATE_CHANGE and answer.tokens > 0 and not scripted_llm.requests[0].aborted
