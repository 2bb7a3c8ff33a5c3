"""Hidden acceptance tests for the CSV row prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from csvrow import parse_row


def test_examples():
    assert parse_row("a,b,c") == ["a", "b", "c"]
    assert parse_row('x,"y,z"') == ["x", "y,z"]
    assert parse_row("a,,b") == ["a", "", "b"]


def test_one_field():
    assert parse_row("one") == ["one"]


def test_trailing_empty_field():
    assert parse_row("a,") == ["a", ""]


def test_doubled_quotes():
    assert parse_row('"say ""hi""",2') == ['say "hi"', "2"]


def test_quoted_empty():
    assert parse_row('"",x') == ["", "x"]


def test_never_closed():
    with pytest.raises(ValueError):
        parse_row('"open,1')
