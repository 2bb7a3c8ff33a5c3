"""The syntax guard: a file the sandbox's Python cannot parse is an error, also where tree-sitter sees none."""

from __future__ import annotations

from greenloop.agent.changes.syntax import first_error, introduced_error

CUT_TEST = (
    "import pytest\n\nfrom funds import Short\n\n\ndef test_short():\n"
    "    with pytest.raises(Short):\n        raise Short(1)\n    with pytest.raises(Short):\n"
)


def test_a_block_cut_off_at_the_end_is_an_error() -> None:
    # a reply cut at its token limit: the last `with` has no body (IndentationError for Python)
    assert first_error("tests/test_funds.py", CUT_TEST) == 9


def test_the_same_text_with_its_body_parses() -> None:
    assert first_error("tests/test_funds.py", CUT_TEST + "        raise Short(2)\n") is None


def test_tree_sitter_errors_still_found_first() -> None:
    assert first_error("app.py", "def f(:\n    return 1\n") == 1


def test_a_warning_of_pythons_parser_is_not_an_error() -> None:
    assert first_error("app.py", 'PATTERN = "\\d+"\n') is None  # an invalid escape: a warning only


def test_other_languages_keep_tree_sitters_word() -> None:
    assert first_error("index.js", "function f() { return 1; }\n") is None
    assert first_error("index.js", "function f( { return 1; }\n") is not None


def test_a_new_cut_off_block_is_introduced_a_broken_file_is_not_blamed() -> None:
    whole = CUT_TEST + "        raise Short(2)\n"
    assert introduced_error("tests/test_funds.py", whole, CUT_TEST) == 9
    assert introduced_error("tests/test_funds.py", CUT_TEST, CUT_TEST + "\n") is None
