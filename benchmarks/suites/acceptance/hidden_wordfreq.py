"""Hidden acceptance tests for the word-frequency prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from wordfreq import most_common, word_frequencies


def test_example():
    assert word_frequencies("The cat and the hat.") == {"the": 2, "cat": 1, "and": 1, "hat": 1}


def test_empty():
    assert word_frequencies("") == {}


def test_apostrophes_and_punctuation():
    assert word_frequencies("Don't stop, don't!") == {"don't": 2, "stop": 1}


def test_digits_are_word_characters():
    assert word_frequencies("route 66, Route 66") == {"route": 2, "66": 2}


def test_most_common_example():
    assert most_common("b a b c a b", 2) == [("b", 3), ("a", 2)]


def test_ties_alphabetical():
    assert most_common("c b a", 2) == [("a", 1), ("b", 1)]


def test_n_larger_than_words():
    assert most_common("x y x", 10) == [("x", 2), ("y", 1)]


def test_negative_n():
    with pytest.raises(ValueError):
        most_common("a b", -1)
