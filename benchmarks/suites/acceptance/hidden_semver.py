"""Hidden acceptance tests for the semver prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from semver import compare, parse


def test_parse():
    assert parse("1.2.3") == (1, 2, 3)
    assert parse("10.0.7") == (10, 0, 7)


def test_numbers_not_text():
    assert compare("1.2.3", "1.10.0") == -1
    assert compare("1.10.0", "1.2.3") == 1


def test_equal():
    assert compare("2.0.0", "2.0.0") == 0


def test_major_wins():
    assert compare("0.9.9", "1.0.0") == -1


def test_pre_release_is_older():
    assert compare("1.0.0-alpha", "1.0.0") == -1
    assert compare("1.0.0", "1.0.0-alpha") == 1


def test_invalid_parse():
    with pytest.raises(ValueError):
        parse("1.2")


def test_invalid_compare():
    with pytest.raises(ValueError):
        compare("1.2", "1.2.3")
