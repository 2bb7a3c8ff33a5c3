from calculator import add, average, multiply, subtract


def test_add():
    assert add(2, 3) == 5


def test_subtract():
    assert subtract(10, 4) == 6


def test_multiply():
    assert multiply(3, 4) == 12


def test_average():
    assert average([2, 4, 6]) == 4


def test_average_of_one():
    assert average([7]) == 7


def test_average_empty():
    assert average([]) == 0.0
