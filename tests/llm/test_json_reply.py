"""Extracting JSON from what models actually write."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from greenloop.llm.json_reply import ReplyError, extract_json, parse_reply


class Item(BaseModel):
    name: str
    count: int


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "a", "count": 2}',
        '  \n```json\n{"name": "a", "count": 2}\n```  ',
        '```\n{"name": "a", "count": 2}\n```',
        'Here you go: {"name": "a", "count": 2}. Anything else?',
        '{"name": "a", "count": 2,}',
        "{'name': 'a', 'count': 2}",
        'Note [1]: the answer is {"name": "a", "count": "2"}',
    ],
)
def test_parses_what_small_models_write(text: str) -> None:
    assert parse_reply(text, Item) == Item(name="a", count=2)


def test_brackets_inside_strings_do_not_confuse_extraction() -> None:
    assert extract_json('x {"a": "}{]["} y') == {"a": "}{]["}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("no json here", "no JSON object"),
        ('{"name": "a", "count": ', "cut off"),
        ('{"name": "a" "count": 2}', "not valid JSON"),
        ('{"name": "a"}', "count: Field required"),
        ('{"name": "a", "count": "many"}', "count: Input should be a valid integer"),
    ],
)
def test_unusable_replies_explain_themselves(text: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_reply(text, Item)


def test_long_unclosed_reply_is_rejected_quickly() -> None:
    import time

    text = "{" * 200_000
    started = time.monotonic()
    with pytest.raises(ReplyError, match="cut off"):
        parse_reply(text, Item)
    assert time.monotonic() - started < 2


def test_raw_newlines_and_tabs_inside_strings_are_kept() -> None:
    # Qwen2.5-Coder 1.5B through llama.cpp's JSON mode wrote this shape in the fix benchmark
    reply = '{"name": "first line\nsecond\tline", "count": 2}'
    assert parse_reply(reply, Item) == Item(name="first line\nsecond\tline", count=2)
    assert parse_reply(f"```json\n{reply}\n```", Item).count == 2  # fenced too
