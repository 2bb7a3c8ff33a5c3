"""Hidden acceptance tests for the rle prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from rle import decode, encode


def test_encode_example():
    assert encode("aaabcc") == "3a1b2c"


def test_decode_example():
    assert decode("3a1b2c") == "aaabcc"


def test_empty():
    assert encode("") == ""
    assert decode("") == ""


def test_counts_of_several_digits():
    assert encode("x" * 12) == "12x"
    assert decode("12x") == "x" * 12


def test_single_characters():
    assert encode("abc") == "1a1b1c"


def test_round_trip():
    text = "hello   world!!"
    assert decode(encode(text)) == text


def test_malformed():
    with pytest.raises(ValueError):
        decode("a3")
