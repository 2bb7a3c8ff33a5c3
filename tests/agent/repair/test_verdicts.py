"""Value conflicts: a failing pytest comparison read into the call, the code's value and the check's, and the verdict."""

from __future__ import annotations

import pytest

from greenloop.agent.changes.edits import apply_search_replace
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.repair.answers import expression, verdict
from greenloop.agent.repair.check_statements import Check, failing_checks, splice_checks
from greenloop.agent.repair.verdicts import code_notes, conflicts, given_reply, head_and_docstring
from greenloop_sandbox import TestFailure, TestReport

TESTS = TestFiles.of(["tests/**"], [], writable=True)
WHERE = "assert 14.0 == -14\n +  where 14.0 = celsius_to_fahrenheit(-10)"


def check(text: str, message: str, line: int = 5) -> Check:
    return Check("tests/test_t.py", "test_t", line, line + text.count("\n"), text, message)


def test_a_call_against_a_literal_gives_both_values_and_the_check_rewritten_to_expect_the_codes() -> None:
    [c] = conflicts([check("    assert celsius_to_fahrenheit(-10) == -14", WHERE)])
    assert (c.call, c.got, c.want, c.raised) == ("celsius_to_fahrenheit(-10)", "14.0", "-14", False)
    assert c.expecting_code() == "assert celsius_to_fahrenheit(-10) == 14.0"
    # either side may hold the call; a long float is compared approximately
    [r] = conflicts([check("    assert -10 == f(-14)", "assert -10 == -25.555555555555557\n +  where ...")])
    assert r.expecting_code() == "assert pytest.approx(-25.55555556) == f(-14)"
    words = ("AssertionError: assert {'hello': 2, 'world': 1} == {'hello': 2, 'world': 2}\n  Common items:")
    [d] = conflicts([check('    assert count("Hello, world! Hello")\\\n        == {"hello": 2, "world": 2}', words)])
    assert d.expecting_code() == "assert count(\"Hello, world! Hello\")\\\n    == {'hello': 2, 'world': 1}"


def test_a_raise_the_code_means_becomes_pytest_raises_and_a_crash_is_no_conflict() -> None:
    [c] = conflicts([check("    assert to_roman(5000) == 'MMMM'", "ValueError: must be 1..3999")])
    assert c.raised and c.expecting_code() == "with pytest.raises(ValueError):\n    to_roman(5000)"
    for crash in ("TypeError: 'int' object is not callable", "NameError: name 'f' is not defined",
                  "AttributeError: 'list' object has no attribute 'strip'", "InsufficientFunds: low"):
        assert conflicts([check("    assert f(1) == 2", crash)]) == [], crash


@pytest.mark.parametrize("text, message", [
    ("    assert f(1) == g(2)", "assert 1 == 2"),  # no literal side
    ("    assert x == 2", "assert 1 == 2"),  # no call: nothing the code computed
    ("    assert f(1) == [1, 2]", "AssertionError: assert [1, 2, 3, ...] == [1, 2]"),  # pytest cut the value short
    ("    assert f(1) == 3", "assert 1 == 2"),  # the report is about another comparison
    ("    assert f(1) != 3", "assert 3 != 3"),
    ("    assert f(1) == 3\n    assert f(2) == 4", "assert 1 == 3"),
    ("    assert stats(path, 'a') == 3", "assert 1 == 3"),  # what `path` holds is not in the question
    ("    assert account.balance() == 3", "assert 1 == 3"),  # nor what the object holds
    ("    assert len(f(1)) == 3", "assert 1 == 3"),
])
def test_what_is_not_a_conflict_of_two_known_values_is_left_alone(text: str, message: str) -> None:
    assert conflicts([check(text, message)]) == []


def test_the_reply_agrees_with_one_side_or_decides_nothing() -> None:
    [c] = conflicts([check("    assert celsius_to_fahrenheit(-10) == -14", WHERE)])
    assert verdict("-18 + 32 = 14.\n```python\n14\n```", c) == "code"
    assert verdict("```python\n-14.0\n```", c) == "test"
    assert verdict(r"So it gives \(\boxed{14}\).", c) == "code"
    assert verdict("It returns `-14`.", c) == "test"
    assert verdict("```python\n-13\n```", c) is None
    assert verdict("I cannot tell.", c) is None
    [r] = conflicts([check("    assert to_roman(5000) == 'MMMM'", "ValueError: must be 1..3999")])
    assert verdict("Out of range.\n```python\nValueError\n```", r) == "code"
    assert verdict("```python\n'MMMM'\n```", r) == "test"


def test_a_value_in_prose_or_rounded_is_read_and_decides_only_when_it_picks_one_side() -> None:
    # the replies' last lines, as the 1.5B model gave them in the generation bench
    [k] = conflicts([check("    assert kelvin_to_celsius(100) == 173.15", "assert -173.15 == 173.15")])
    assert verdict("3. Subtract: \\(100 - 273.15 = -173.15\\).\n\n"
                   "Therefore, the value of `kelvin_to_celsius(100)` is \\(-173.15\\).", k) == "code"
    [f] = conflicts([check("    assert fahrenheit_to_celsius(0) == 32", "assert -17.77777777777778 == 32")])
    assert verdict("\\[ C \\approx -17.78 \\]\n\n```python\n-17.78\n```", f) == "code"  # rounded
    assert verdict("```python\n-17.7\n```", f) == "code"  # cut short, not rounded: close to one side only
    assert verdict("```python\n-18.8\n```", f) is None  # 6% off
    [r] = conflicts([check("    assert to_roman(5000) == 'MMMM'", "ValueError: must be 1..3999")])
    assert verdict('To convert 5000 to Roman numerals, you would use the numeral "MMMM".', r) == "test"
    assert verdict("5000 is out of range, so it raises ValueError.", r) == "code"
    assert verdict("5000 is above 3999, so it raises ValueError.", r) is None  # 3999 is a second answer
    [c] = conflicts([check("    assert celsius_to_fahrenheit(-10) == -14", WHERE)])
    assert verdict("So -10 gives 14 here.", c) == "code"  # the call's own -10 is not an answer
    assert verdict("It gives 14, which is 3 more than 11.", c) is None  # two numbers: no answer
    assert verdict("The function's value is '14'", c) is None  # a string, not the number
    # a value both sides round to decides nothing; an exact match wins over a rounded one
    [a] = conflicts([check("    assert area(1) == 3.14", "assert 3.14159 == 3.14")])
    assert verdict("```python\n3.14\n```", a) == "test"
    assert verdict("```python\n3.1\n```", a) is None


def test_a_number_slightly_off_picks_the_side_it_is_close_to_only_when_the_other_is_far() -> None:
    # the bench's temperature test: the model worked out -46 * 5/9 as -25 (it is -25.56)
    [c] = conflicts([check("    assert fahrenheit_to_celsius(-14) == -10",
                           "assert -25.555555555555557 == -10\n +  where -25.555555555555557 = fahrenheit_to_celsius(-14)")])
    assert verdict("```python\n-25\n```", c) == "code"
    assert verdict("```python\n-10.3\n```", c) == "test"
    assert verdict("```python\n-14.0\n```", c) is None  # close to neither
    assert verdict("```python\n-26.67\n```", c) == "code"  # the bench at dcd38e0: -46 * 5/9, 4% off
    assert verdict("```python\n-24\n```", c) is None  # off by more than 5%
    # a value python computed from the model's formula is exact: near a side is a wrong formula (bf93d33:
    # `-14 + 40 / 9` = -9.56 told the code it must give -10)
    assert verdict("```python\n-14 + 40 / 9\n```", c, computed="-9.555555555555555") is None
    assert verdict("```python\n(-14 - 32) * 5 / 9\n```", c, computed="-25.555555555555557") == "code"
    [d] = conflicts([check("    assert f(1) == 10.4", "assert 10.0 == 10.4\n +  where 10.0 = f(1)")])
    assert verdict("```python\n10.2\n```", d) is None  # as close to both
    assert verdict("```python\n10.1\n```", d) is None  # closer to one, not ten times
    [e] = conflicts([check("    assert f(1) == 'a'", "assert 'b' == 'a'\n +  where 'b' = f(1)")])
    assert verdict("```python\n1\n```", e) is None  # not numbers


def test_a_list_or_dict_answer_decides_by_the_places_the_two_sides_dispute() -> None:
    # the bench at bf93d33: the code's fizzbuzz(12) was right, the check had '9' for 'Fizz'
    got = ['1', '2', 'Fizz', '4', 'Buzz', 'Fizz', '7', '8', 'Fizz', 'Buzz', '11', 'Fizz']
    want = [*got[:8], '9', *got[9:]]
    [c] = conflicts([check(f"    assert fizzbuzz(12) == {want!r}", f"assert {got!r} == {want!r}\n +  where {got!r} = fizzbuzz(12)")])
    assert verdict(f"```python\n{[*got[:11], 'FizzBuzz']!r}\n```", c) == "code"  # wrong at the end, right at 9
    assert verdict(f"```python\n{[*want[:11], 'FizzBuzz']!r}\n```", c) == "test"
    assert verdict(f"```python\n{[*got[:8], 'FizzBuzz', *got[9:]]!r}\n```", c) is None  # neither at 9
    assert verdict(f"```python\n{got[:11]!r}\n```", c) is None  # not their shape
    [d] = conflicts([check("    assert count_words('a b a') == {'a': 2, 'b': 2}",
                           "assert {'a': 2, 'b': 1} == {'a': 2, 'b': 2}\n +  where {'a': 2, 'b': 1} = count_words('a b a')")])
    assert verdict("```python\n{'a': 3, 'b': 1}\n```", d) == "code"
    assert verdict("```python\n{'a': 3, 'c': 1}\n```", d) is None  # other keys


def test_an_answer_written_as_the_check_gives_what_it_compares_the_call_to() -> None:
    [c] = conflicts([check("    assert from_roman('IX') == 9", "assert 11 == 9\n +  where 11 = from_roman('IX')")])
    assert verdict("```python\nfrom_roman('IX') == 9\n```", c) == "test"
    assert verdict("```python\nassert from_roman(\"IX\") == 11\n```", c) == "code"
    assert verdict("```python\n9 == from_roman('IX')\n```", c) == "test"
    assert verdict("```python\nfrom_roman('X') == 11\n```", c) is None  # another call
    assert verdict("```python\nfrom_roman('IX') < 11\n```", c) is None


def test_an_answer_to_compute_is_arithmetic_on_literals_never_a_call_of_the_code() -> None:
    [c] = conflicts([check("    assert celsius_to_fahrenheit(-10) == -14", WHERE)])
    assert expression("```python\n(-10) * 9 / 5 + 32\n```", c) == "(-10) * 9 / 5 + 32"
    assert expression("```python\nround((-10) * 1.8 + 32, 2)\n```", c) == "round((-10) * 1.8 + 32, 2)"
    assert expression("```python\nmath.floor(-10 * 1.8) + 32\n```", c) == "math.floor(-10 * 1.8) + 32"
    assert verdict("```python\n(-10) * 9 / 5 + 32\n```", c, computed="14.0") == "code"
    for reply in ("```python\n14\n```",  # a value: nothing to compute
                  "```python\ncelsius_to_fahrenheit(-10)\n```",  # the code itself
                  "```python\n__import__('temperature').celsius_to_fahrenheit(-10)\n```",
                  "```python\n(14).__class__\n```",
                  "```python\nx = -10 * 9 / 5 + 32\n```",  # a statement
                  "```python\n(lambda c: c * 9 / 5 + 32)(-10)\n```",
                  "I cannot tell."):
        assert expression(reply, c) is None, reply


def test_a_function_written_as_one_return_is_its_expression_with_the_calls_arguments() -> None:
    # the 1.5B model, asked for fizzbuzz(9) at HEAD (2026-11-26): a value wrong in the disputed place
    # twice, then the function itself as one comprehension, which python computes right
    got, want = ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz"], ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9"]
    [c] = conflicts([check(f"    assert fizzbuzz(9) == {want!r}", f"AssertionError: assert {got!r} == {want!r}")])
    reply = ("The function `fizzbuzz(9)` should return `['1', '2', 'Fizz', '4', 'Buzz', 'Fizz', '7', '8', 'FizzBuzz']`."
             "\n\n```python\ndef fizzbuzz(n: int) -> list[str]:\n    \"\"\"The list.\"\"\"\n"
             "    return ['Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i) for i in range(1, n + 1)]\n```")
    formula = expression(reply, c)
    assert formula == "['Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i) for i in range(1, 9 + 1)]"
    assert verdict(reply, c, computed=repr(got)) == "code"  # what the sandbox computes (test_candidates.py)
    for body in ("    return fizzbuzz(n - 1)",  # calls itself: not a name python may compute with
                 "    out = []\n    return out",  # more than one statement
                 "    return [n for n in range(3)]",  # a comprehension that rebinds the parameter
                 "    return open('x').read()"):  # a name outside the allowed ones
        assert expression(f"```python\ndef fizzbuzz(n):\n{body}\n```", c) is None, body
    assert expression("```python\ndef fizzbuzz(n, m):\n    return n + m\n```", c) is None  # arguments do not match


def test_a_long_value_may_be_given_as_a_comprehension_over_its_own_variables() -> None:
    want = repr(["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else str(i) for i in range(1, 101)])
    [c] = conflicts([check(f"    assert fizzbuzz(100) == {want}", f"assert [] == {want}")])
    assert c.long  # 100 values: asked for only as an expression
    formula = '["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i) for i in range(1, 101)]'
    assert expression(f"```python\n{formula}\n```", c) == formula
    assert expression("```python\n{k: v for k, v in zip('ab', (1, 2))}\n```", c) is not None
    # a variable the comprehension does not bind is still a name of the project's code
    assert expression("```python\n[fizz(i) for i in range(1, 101)]\n```", c) is None
    [short] = conflicts([check("    assert fizzbuzz(3) == ['1', '2', 'Fizz']", "assert [] == ['1', '2', 'Fizz']")])
    assert not short.long


def test_a_name_the_test_bound_once_to_a_literal_or_a_call_result_stands_for_it() -> None:
    # the generation bench's word-count test, as the 1.5B model wrote it
    source = ('from wordcount import count_words, top_words\n\ndef test_count_words():\n'
              '    text = "Hello, world! Hello, universe."\n'
              "    assert count_words(text) == {'hello': 2, 'world': 2, 'universe': 1}\n\n"
              'def test_top_words():\n    text = "Hello, world! Hello, universe."\n'
              "    assert top_words(text, n=2) == [('hello', 2), ('world', 2)]\n")
    message = ("AssertionError: assert {'hello': 2, 'world': 1, 'universe': 1} == "
               "{'hello': 2, 'world': 2, 'universe': 1}\n  Common items:")
    first = check("    assert count_words(text) == {'hello': 2, 'world': 2, 'universe': 1}", message, 5)
    second = check("    assert top_words(text, n=2) == [('hello', 2), ('world', 2)]",
                   "AssertionError: assert [('hello', 2), ('universe', 1)] == [('hello', 2), ('world', 2)]", 9)
    assert conflicts([first, second]) == []  # without the file, `text` is unknown
    [c, t] = conflicts([first, second], {"tests/test_t.py": source})
    assert c.call == 'count_words("Hello, world! Hello, universe.")'  # as the test wrote it
    assert t.call == 'top_words("Hello, world! Hello, universe.", n=2)'
    assert c.expecting_code() == "assert count_words(text) == {'hello': 2, 'world': 1, 'universe': 1}"
    # the result bound to a name first (the bench's next word-count test): the name stands for the call
    result = ('from wordcount import count_words\n\ndef test_punctuation():\n'
              '    text = "Hello, world! Hello, universe."\n    words = count_words(text)\n'
              "    assert words == {'hello': 2, 'world': 2, 'universe': 1}\n")
    [w] = conflicts([check("    assert words == {'hello': 2, 'world': 2, 'universe': 1}", message, 6)],
                    {"tests/test_t.py": result})
    assert w.call == 'count_words("Hello, world! Hello, universe.")'
    assert w.expecting_code() == "assert words == {'hello': 2, 'world': 1, 'universe': 1}"
    # a name bound twice, changed in place, bound below the check, or a parameter, is not a literal
    changed = ("def test_a(tmp_path):\n    xs = [1, 2]\n    xs.append(3)\n    n = 1\n    n = 2\n"
               "    assert f(xs) == 3\n    late = 5\n")
    for name in ("xs", "n", "late", "tmp_path"):
        statement = check(f"    assert f({name}) == 3", "assert 1 == 3", 6)
        assert conflicts([statement], {"tests/test_t.py": changed}) == [], name
    # a result of a call on what the question cannot show, or changed after the call, stands for nothing
    state = ("def test_b(tmp_path):\n    r = f(tmp_path)\n    s = f(1)\n    s.update(a=1)\n"
             "    assert r == 3\n    assert s == 3\n")
    for name, line in (("r", 5), ("s", 6)):
        statement = check(f"    assert {name} == 3", "assert 1 == 3", line)
        assert conflicts([statement], {"tests/test_t.py": state}) == [], name


def test_checks_the_request_sides_with_the_code_on_are_rewritten_and_the_rest_told_to_the_code_rungs() -> None:
    source = ("from t import c, k, add\n\n\ndef test_t():\n    assert c(-10) == -14\n    assert k(0) == 0\n"
              "    assert add(2, 3) == 5\n")
    checks = [check("    assert c(-10) == -14", "assert 14.0 == -14", 5),
              check("    assert k(0) == 0", "assert -273.15 == 0", 6),
              check("    assert add(2, 3) == 5", "assert -1 == 5", 7)]
    found = conflicts(checks)
    sides = {found[0].key: "code", found[1].key: None, found[2].key: "test"}
    reply = given_reply(checks, sides, found)  # type: ignore[arg-type]
    assert reply == "```python\nassert c(-10) == 14.0\nassert k(0) == 0\nassert add(2, 3) == 5\n```\n"
    [edit] = splice_checks(checks, {"tests/test_t.py": source}, reply)
    assert (edit.search, edit.replace) == ("    assert c(-10) == -14\n", "    assert c(-10) == 14.0\n")  # only that one
    assert given_reply(checks, {found[0].key: "test"}, found) == ""  # nothing rewritten: no candidate
    notes = code_notes(found, sides)  # type: ignore[arg-type]
    assert "`add(2, 3)` must give `5`; the code gives `-1`" in notes and "c(-10)" not in notes


def test_an_interface_is_the_whole_signature_and_the_docstring_as_written_without_the_body() -> None:
    rows = ["    def convert(", "        kelvin: float,", "    ) -> float:  # a note", '        """Kelvin to Celsius.',
            "", "        Raises ValueError below zero.", '        """', "        if kelvin < 0:", "            raise ValueError"]
    assert head_and_docstring(rows) == ('def convert(\n    kelvin: float,\n) -> float:  # a note\n    """Kelvin to Celsius.\n'
                                        '\n    Raises ValueError below zero.\n    """')
    assert head_and_docstring(["def f(x):", "    return x"]) == "def f(x):"


# the 1.5B model's fizzbuzz test (generation bench, bf93d33, shortened): its case for 9 expects '9'
FIZZ = '''import pytest
from fizzbuzz import fizzbuzz


@pytest.mark.parametrize("n, expected", [
    (1, ["1"]),
    (3, ["1", "2", "Fizz"]),
    (9, ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9"]),  # nine
    pytest.param(10, ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9", "Buzz"], id="ten"),
])
def test_fizzbuzz(n, expected):
    result = fizzbuzz(n)
    assert result == expected
'''
NINE = ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz"]


def _case_failure(test_id: str, got: list[str], want: list[str]) -> TestFailure:
    return TestFailure(test_id=f"tests/test_fizz.py::test_fizzbuzz[{test_id}]", file="tests/test_fizz.py", line=13,
                       message=f"AssertionError: assert {got!r} == {want!r}\n  At index 8 diff: 'Fizz' != '9'",
                       traceback="tests/test_fizz.py:13: AssertionError")


def test_a_parametrized_case_is_judged_by_its_entry_and_the_entry_is_what_is_rewritten() -> None:
    files = {"tests/test_fizz.py": FIZZ}
    wrong = [*NINE[:8], "9"]
    report = TestReport(failed=2, failures=[_case_failure("9-expected2", NINE, wrong),
                                            _case_failure("ten", [*NINE, "Buzz"], [*wrong, "Buzz"])])
    checks = failing_checks(report, files, TESTS)
    assert [(c.start_line, c.via.strip()) for c in checks] == [(8, "assert result == expected"),
                                                               (9, "assert result == expected")]
    found = conflicts(checks, files)
    assert [(c.call, c.got, c.want) for c in found] == [
        ("fizzbuzz(9)", repr(NINE), '["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9"]'),
        ("fizzbuzz(10)", repr([*NINE, "Buzz"]), '["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9", "Buzz"]')]
    reply = given_reply(checks, {c.key: "code" for c in found}, found)
    out = FIZZ
    for edit in splice_checks(checks, files, reply):
        out = apply_search_replace(out, edit.search, edit.replace).text
    assert out == FIZZ.replace('["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9"]', repr(NINE)).replace(
        '["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "9", "Buzz"]', repr([*NINE, "Buzz"]))
    # the statement every case runs is not a check of one case: a literal in it is left alone
    one = FIZZ.replace("assert result == expected", "assert result == ['1']")
    [only] = failing_checks(TestReport(failed=1, failures=[_case_failure("9-expected2", NINE, ["1"])]),
                            {"tests/test_fizz.py": one}, TESTS)
    assert conflicts([only], {"tests/test_fizz.py": one}) == []


def test_a_case_whose_id_greenloop_cannot_tell_is_the_statement_as_before() -> None:
    files = {"tests/test_fizz.py": FIZZ}
    [c] = failing_checks(TestReport(failed=1, failures=[_case_failure("9-expected7", NINE, ["1"])]), files, TESTS)
    assert (c.start_line, c.via) == (13, "")
