"""Hidden acceptance tests for the slugify prompt (written from the prompt by hand; never shown to the loop)."""

from slugs import slugify


def test_examples():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("Café au lait") == "cafe-au-lait"
    assert slugify("---") == ""


def test_already_a_slug():
    assert slugify("already-slugged") == "already-slugged"


def test_spaces_at_the_ends():
    assert slugify("  spaces  everywhere ") == "spaces-everywhere"


def test_accents_and_digits():
    assert slugify("Über 9000") == "uber-9000"


def test_underscores_are_separators():
    assert slugify("a__b") == "a-b"


def test_empty():
    assert slugify("") == ""
