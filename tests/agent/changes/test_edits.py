"""SEARCH/REPLACE matching: exact, whitespace-insensitive, near, ambiguous and missing."""

import ast

import pytest

from greenloop.agent.changes.edits import EditMiss, apply_search_replace

SOURCE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def test_exact_unique_match_is_replaced() -> None:
    text = "def add(a, b):\n    return a - b\n"
    result = apply_search_replace(text, "return a - b", "return a + b")
    assert result.match == "exact"
    assert result.text == "def add(a, b):\n    return a + b\n"


def test_search_matching_twice_is_refused_with_advice() -> None:
    with pytest.raises(EditMiss, match="matches 2 places"):
        apply_search_replace(SOURCE, "    return a - b\n", "    return a + b\n")


def test_whitespace_differences_still_match_and_keep_file_indentation() -> None:
    result = apply_search_replace(SOURCE, "def add(a,  b):\nreturn a - b", "def add(a, b):\nreturn a + b")
    assert result.match == "whitespace"
    assert "def add(a, b):\n    return a + b\n" in result.text
    assert result.text.count("return a - b") == 1  # sub() untouched


def test_near_match_above_threshold_is_applied() -> None:
    text = "def area(r):\n    return 3.14 * r * r\n"
    result = apply_search_replace(text, "def area(r):\n    return 3.14 * r*r", "def area(r):\n    return 3.14159 * r * r")
    assert result.match == "fuzzy"
    assert "3.14159" in result.text


def test_miss_reports_the_closest_lines() -> None:
    text = "alpha = 1\nbeta = 2\ngamma = 3\n"
    with pytest.raises(EditMiss) as err:
        apply_search_replace(text, "totally unrelated code that is not here", "x")
    assert "did you mean" in str(err.value)
    assert "|" in str(err.value)  # numbered lines shown


def test_empty_search_is_refused() -> None:
    with pytest.raises(EditMiss, match="empty"):
        apply_search_replace("x = 1\n", "  \n", "y = 2\n")


def test_a_search_copied_from_the_report_is_named_as_such() -> None:
    text = "def test_count():\n    assert count('hello test') == {'hello': 2, 'test': 1}\n"
    report_line = "    assert {'hello': 1, 'test': 1} == {'hel...test': 1, ...}\n"
    with pytest.raises(EditMiss) as err:
        apply_search_replace(text, report_line, "    assert True\n")
    assert "how the test report shortens long values" in str(err.value)
    with pytest.raises(EditMiss) as err:  # an ordinary miss gets no such note
        apply_search_replace(text, "    assert count('x y z w') == {'x': 3}\n", "")
    assert "shortens" not in str(err.value)


def test_a_replacement_moved_to_the_files_indentation_keeps_a_multi_line_strings_later_lines() -> None:
    text = "class Bar:\n    def warn(self):\n        print('old')\n        return 1\n"
    replace = "print('''new\ncolumn 0\n      odd''')\nreturn 2\n"  # written at column 0: found by whitespace
    result = apply_search_replace(text, "print('old')\nreturn 1\n", replace, "bar.py")
    assert result.match == "whitespace"
    strings = [n.value for n in ast.walk(ast.parse(result.text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert strings == ["new\ncolumn 0\n      odd"] and "        return 2\n" in result.text
