"""Hidden acceptance tests for the matrix prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from matmath import multiply, transpose


def test_transpose_example():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


def test_transpose_empty():
    assert transpose([]) == []


def test_multiply_example():
    assert multiply([[1, 2], [3, 4]], [[5, 6], [7, 8]]) == [[19, 22], [43, 50]]


def test_multiply_row_by_column():
    assert multiply([[1, 2, 3]], [[4], [5], [6]]) == [[32]]


def test_shapes_that_do_not_match():
    with pytest.raises(ValueError):
        multiply([[1, 2]], [[1, 2]])


def test_ragged():
    with pytest.raises(ValueError):
        transpose([[1, 2], [3]])
    with pytest.raises(ValueError):
        multiply([[1], [2, 3]], [[1]])


def test_arguments_unchanged():
    a, b = [[1, 2], [3, 4]], [[1, 0], [0, 1]]
    assert multiply(a, b) == [[1, 2], [3, 4]]
    transpose(a)
    assert a == [[1, 2], [3, 4]] and b == [[1, 0], [0, 1]]
