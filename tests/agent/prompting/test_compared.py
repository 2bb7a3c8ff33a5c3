"""The failing assertion in words (compared.py): pytest's rewritten asserts, each operator, and what it never guesses."""

from __future__ import annotations

import pytest

from greenloop.agent.prompting.compared import VALUE_CHARS, compared

WHERE = " +  where {} = {}"


@pytest.mark.parametrize(("message", "said"), [
    ("assert 14.0 == -14\n" + WHERE.format("14.0", "celsius_to_fahrenheit(-10)"),
     "`celsius_to_fahrenheit(-10)` returned `14.0`, and the test expects `-14`."),
    # the code's value on the right: the `where` line says which side it is
    ("assert -14 == 14.0\n" + WHERE.format("14.0", "celsius_to_fahrenheit(-10)"),
     "`celsius_to_fahrenheit(-10)` returned `14.0`, and the test expects `-14`."),
    # a message of its own first, and a function shown with its address (tidied away)
    ("AssertionError: Test 4\nassert 2 == 1\n" + WHERE.format("2", "<function vowels_count at 0x7f70b77a1f80>('bye')"),
     "`vowels_count('bye')` returned `2`, and the test expects `1`."),
    ("assert 3 != 3\n" + WHERE.format("3", "f()"), "`f()` returned `3`, and the test expects anything but `3`."),
    ("assert 'a' in ['b', 'c']\n" + WHERE.format("['b', 'c']", "letters()"),
     "`letters()` returned `['b', 'c']`, and the test expects it to contain `'a'`."),
    ("assert 3 not in [1, 3]\n" + WHERE.format("3", "pick()"),
     "`pick()` returned `3`, and the test expects it not to be in `[1, 3]`."),
    ("assert None is True\n" + WHERE.format("None", "h(1)"), "`h(1)` returned `None`, and the test expects it to be `True`."),
    ("assert 3 < 2\n" + WHERE.format("2", "size()"), "`size()` returned `2`, and the test expects it to be greater than `3`."),
    ("assert False\n" + WHERE.format("False", "is_prime(7)"), "`is_prime(7)` returned `False`, and the test expects a true value."),
    ("assert not True\n" + WHERE.format("True", "is_prime(8)"),
     "`is_prime(8)` returned `True`, and the test expects a false value."),
    # both sides computed: the left is the code's, the right says where it came from
    ("assert 2 == 3\n" + WHERE.format("2", "f(1)") + "\n" + WHERE.format("3", "g(1)"),
     "`f(1)` returned `2`, and the test expects `3` (what `g(1)` returned)."),
    # only the outermost `where` names a side
    ("assert 3 == 4\n" + WHERE.format("3", "len([1, 2, 3])") + "\n +    where [1, 2, 3] = items()",
     "`len([1, 2, 3])` returned `3`, and the test expects `4`."),
])
def test_a_comparison_pytest_showed_is_said_in_words(message: str, said: str) -> None:
    assert compared(message) == said


def test_with_no_where_the_failing_line_says_which_side_the_test_computed() -> None:
    traceback = "    def test_total():\n        total = add_all([2, 3])\n>       assert total == 6\nE       assert 5 == 6\n"
    assert compared("assert 5 == 6", traceback) == "`total` is `5`, and the test expects `6`."
    swapped = traceback.replace("total == 6", "6 == total").replace("5 == 6", "6 == 5")
    assert compared("assert 6 == 5", swapped) == "`total` is `5`, and the test expects `6`."
    assert compared("assert 5 == 6", swapped) == ""  # the failing line is another comparison: its 6 shown as 5
    assert compared("assert 5 == 6") == ""  # neither a where nor a failing line: never a guess


@pytest.mark.parametrize("message", [
    "ZeroDivisionError: division by zero", "", "assert 0 < 5 < 3\n" + WHERE.format("5", "f()"),
    "assert x\n" + WHERE.format("y", "f()"), "assert (((", "assert <Foo object> == 3\n" + WHERE.format("<Foo object>", "x()"),
    "assert 'a' == " + "[" * 5000 + "\n" + WHERE.format("'a'", "f()"), "assert '" + "x" * 30_000 + "' == 'y'",
])
def test_what_it_cannot_read_says_nothing_and_never_raises(message: str) -> None:
    assert compared(message) == ""


def test_a_huge_or_binary_looking_value_is_cut_to_one_printable_line() -> None:
    huge = "'" + "x" * 5000 + "'"
    said = compared(f"assert {huge} == 'y'\n" + WHERE.format(huge, "big()"))
    assert said.startswith("`big()` returned `'xxx") and "(5002 characters)`" in said and len(said) < 2 * VALUE_CHARS
    binary = "'\x00\x1b[1m\x07ab'"
    said = compared(f"assert {binary} == 'ab'\r\n" + WHERE.format(binary, "raw()"))
    assert said == "`raw()` returned `'\\x00\\x1b[1m\\x07ab'`, and the test expects `'ab'`."
    assert said.isprintable()


def test_spaces_inside_a_quoted_value_are_kept_since_they_can_be_the_difference() -> None:
    said = compared("assert 'a  b' == 'a b'\n" + WHERE.format("'a  b'", "join_words(['a', 'b'])"))
    assert said == "`join_words(['a', 'b'])` returned `'a  b'`, and the test expects `'a b'`."
