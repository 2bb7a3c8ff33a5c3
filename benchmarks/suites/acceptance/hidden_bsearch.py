"""Hidden acceptance tests for the binary-search prompt (written from the prompt by hand; never shown to the loop)."""

from bsearch import find, lower_bound


def test_find_examples():
    assert find([1, 3, 5, 7], 5) == 2
    assert find([1, 3, 5, 7], 4) == -1


def test_find_ends_and_empty():
    assert find([1, 3, 5, 7], 1) == 0
    assert find([1, 3, 5, 7], 7) == 3
    assert find([], 1) == -1


def test_find_outside():
    assert find([1, 3, 5, 7], 0) == -1
    assert find([1, 3, 5, 7], 8) == -1


def test_find_in_duplicates():
    items = [2, 2, 2, 3]
    assert items[find(items, 2)] == 2


def test_lower_bound_examples():
    assert lower_bound([1, 2, 2, 3], 2) == 1
    assert lower_bound([1, 2], 9) == 2


def test_lower_bound_edges():
    assert lower_bound([], 5) == 0
    assert lower_bound([1, 2, 2, 3], 0) == 0
    assert lower_bound([1, 3], 2) == 1


def test_large():
    items = list(range(0, 200000, 2))
    assert find(items, 123456) == 61728
    assert find(items, 123457) == -1
    assert lower_bound(items, 123457) == 61729
