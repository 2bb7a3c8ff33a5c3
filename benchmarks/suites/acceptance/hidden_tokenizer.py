"""Hidden acceptance tests for the tokenizer prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from tokenizer import tokenize


def test_examples():
    assert tokenize("3 + 4*x") == ["3", "+", "4", "*", "x"]
    assert tokenize("(a1+2.5)") == ["(", "a1", "+", "2.5", ")"]


def test_empty_and_spaces():
    assert tokenize("") == []
    assert tokenize("   ") == []


def test_power_and_division():
    assert tokenize("x^2") == ["x", "^", "2"]
    assert tokenize("10/ 2-1") == ["10", "/", "2", "-", "1"]


def test_long_numbers_and_names():
    assert tokenize("12.75*rate2") == ["12.75", "*", "rate2"]


def test_other_character():
    with pytest.raises(ValueError):
        tokenize("2 $ 3")
