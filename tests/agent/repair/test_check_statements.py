"""The checks route's parts: the statement a failing test stopped at, corrected ones spliced in, and progress."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.changes.edits import apply_search_replace
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import ReplyRejected, read_reply
from greenloop.agent.repair.check_statements import Check, failing_checks, splice_checks, statement_span
from greenloop.agent.repair.ladder import ladder
from greenloop.agent.repair.progress import further, reached
from greenloop.agent.repair.prompts import render_failures
from greenloop.agent.repair.splice import SpliceError, Unchanged
from greenloop.retrieval import Location
from greenloop_sandbox import TestFailure, TestReport

TESTS = TestFiles.of(["test_*.py", "tests/**"], [], writable=True)
SOURCE = (
    "import json\n\n\ndef test_dump():\n    assert json.dumps(1) == '1'\n    assert json.dumps(\n"
    "        [1, 2]\n    ) == '[1,2]'\n    with open('x') as f:\n        assert f.read() == ''\n"
)


def applied(source: str, edits: list) -> str:
    for edit in edits:
        source = apply_search_replace(source, edit.search, edit.replace).text
    return source


def failure(line: int, message: str = "assert '[1, 2]' == '[1,2]'", file: str = "test_x.py") -> TestFailure:
    return TestFailure(test_id="test_x.py::test_dump", file=file, line=line, message=message,
                       traceback=f"{file}:{line}: AssertionError")


def test_the_statement_is_the_whole_of_a_statement_across_lines_and_inside_a_block() -> None:
    assert statement_span("test_x.py", SOURCE, 6) == (6, 8)
    assert statement_span("test_x.py", SOURCE, 10) == (10, 10)  # inside `with`: the assert, not the with
    assert statement_span("test_x.py", SOURCE.replace("\n", "\r\n"), 6) == (6, 8)


def test_a_failing_check_is_found_from_the_report_in_a_test_file_only() -> None:
    report = TestReport(failed=1, failures=[failure(6)])
    [check] = failing_checks(report, {"test_x.py": SOURCE}, TESTS)
    assert (check.start_line, check.end_line, check.test) == (6, 8, "test_dump")
    assert "json.dumps(\n        [1, 2]\n    ) == '[1,2]'" in check.text and "'[1, 2]'" in check.message
    # a failure whose only place is in code, not a test, gives no check
    code = TestReport(failed=1, failures=[failure(3, file="lib.py").model_copy(update={"traceback": "lib.py:3: E"})])
    assert failing_checks(code, {"test_x.py": SOURCE, "lib.py": "x = 1\n"}, TESTS) == []


def test_corrected_statements_keep_the_files_indentation_and_crlf_endings() -> None:
    source = SOURCE.replace("\n", "\r\n")
    [check] = failing_checks(TestReport(failed=1, failures=[failure(6)]), {"test_x.py": source}, TESTS)
    edits = splice_checks([check], {"test_x.py": source}, "```python\nassert json.dumps([1, 2]) == '[1, 2]'\n```")
    out = applied(source, edits)
    assert "    assert json.dumps([1, 2]) == '[1, 2]'\r\n    with open" in out
    assert "\n" not in out.replace("\r\n", "")
    assert edits[0].search in source and "json.dumps(1)" not in edits[0].search  # only the changed lines


@pytest.mark.parametrize(("reply", "error", "reason"), [
    ("No change needed.", SpliceError, "no code block"),
    ("```python\nassert json.dumps(1) == '1'\n```", Unchanged, "changes nothing"),
    ("```python\njson.dumps([1, 2])\n```", SpliceError, "fewer checks"),
    ("```python\nassert (\n```", SpliceError, "does not parse"),
])
def test_unusable_replies_say_why(reply: str, error: type[Exception], reason: str) -> None:
    check = Check("test_x.py", "test_dump", 5, 5, "    assert json.dumps(1) == '1'", "")
    with pytest.raises(error, match=reason):
        splice_checks([check], {"test_x.py": SOURCE}, reply)


def test_several_checks_need_as_many_statements() -> None:
    checks = [Check("test_x.py", "test_dump", 5, 5, "", ""), Check("test_x.py", "test_dump", 10, 10, "", "")]
    with pytest.raises(SpliceError, match="holds 3 statements for the 2 checks"):
        splice_checks(checks, {"test_x.py": SOURCE}, "```python\nassert 1\nassert 2\nassert 3\n```")
    reply = "```python\nimport math\nassert json.dumps(1) == \"1\"\nassert f.read() == 'x'\n```"
    out = applied(SOURCE, splice_checks(checks, {"test_x.py": SOURCE}, reply))
    assert out.startswith("import json\nimport math\n")  # an import of the reply goes with the file's own
    assert "        assert f.read() == 'x'\n" in out
    assert "    assert json.dumps(1) == '1'\n" in out  # other quotes are no change: the file's line stays as it is


def test_a_failing_test_that_stops_later_got_further_and_an_inserted_line_moves_nothing() -> None:
    state = TestReport(failed=1, failures=[failure(5)])
    later = TestReport(failed=1, failures=[failure(6)])
    assert further(later, reached(later), state, reached(state)) == 1
    assert further(state, reached(state), later, reached(later)) == -1
    other = TestReport(failed=1, failures=[failure(6).model_copy(update={"test_id": "test_x.py::test_other"})])
    assert further(other, reached(other), state, reached(state)) == 0  # not the same failing tests
    # the candidate made line 5 two lines and still fails there (now line 6): no progress
    before = {"test_x.py": "a\nb\nc\nd\nassert x\nassert y\n"}
    after = {"test_x.py": "a\nb\nc\nd\nimport z\nassert x2\nassert y\n"}
    assert reached(later, before, after) == {"test_x.py::test_dump": 5}
    past = TestReport(failed=1, failures=[failure(7)])
    assert reached(past, before, after) == {"test_x.py::test_dump": 6}  # the next check: progress


def test_checks_answered_each_under_its_own_sentence_are_read_in_order_and_code_written_out_is_left_out() -> None:
    # the 1.5B model's way: a sentence and a block per check, then the code under test again
    checks = [Check("test_x.py", "test_dump", 5, 5, "", ""), Check("test_x.py", "test_dump", 10, 10, "", "")]
    reply = ("1. It is 1.\n```python\nassert json.dumps(1) == '2'\n```\n2. Empty.\n```python\n"
             "assert f.read() == 'x'\n```\nThe code:\n```python\ndef dumps(x):\n    return str(x)\n```\n")
    out = applied(SOURCE, splice_checks(checks, {"test_x.py": SOURCE}, reply))
    assert "    assert json.dumps(1) == '2'\n" in out and "        assert f.read() == 'x'\n" in out
    assert "def dumps" not in out
    one = "It is 2.\n```python\nassert json.dumps(1) == '2'\n```\n```python\ndef dumps(x):\n    return 1\n```"
    assert "def dumps" not in applied(SOURCE, splice_checks(checks[:1], {"test_x.py": SOURCE}, one))


def test_failures_are_shown_without_object_addresses() -> None:
    message = "AssertionError: Test 4\nassert 2 == 1\n +  where 2 = <function vowels_count at 0x7f70b77a1f80>('bye')"
    report = TestReport(failed=1, failures=[TestFailure(test_id="t.py::test_v", message=message, traceback=message)])
    shown = render_failures(report)
    assert "where 2 = vowels_count('bye')" in shown and "0x7f" not in shown


def test_a_reply_with_only_the_corrected_checks_puts_each_where_it_is_most_alike() -> None:
    checks = [Check("test_x.py", "test_dump", 5, 5, "    assert json.dumps(1) == '1'", ""),
              Check("test_x.py", "test_dump", 10, 10, "        assert f.read() == ''", "")]
    out = applied(SOURCE, splice_checks(checks, {"test_x.py": SOURCE}, "Only the second.\n```python\n"
                                        "assert f.read() == 'x'\n```"))
    assert "    assert json.dumps(1) == '1'\n" in out and "        assert f.read() == 'x'\n" in out
    with pytest.raises(SpliceError, match="holds 1 statements for the 2 checks"):  # alike to neither
        splice_checks(checks, {"test_x.py": SOURCE}, "```python\nprint('no idea what to check here')\n```")


def test_a_check_wrapped_in_a_test_function_is_refused_since_it_would_never_run() -> None:
    # the 1.5B model's slugify reply: `def test_slugify(self): assert ...` in place of the check; spliced in,
    # the check became a function nobody calls, and the test went on to its next check
    check = Check("test_x.py", "test_dump", 5, 5, "    assert json.dumps(1) == '1'", "")
    wrapped = "```python\ndef test_dump(self):\n    assert json.dumps(1) == '1.0'\n```"
    with pytest.raises(SpliceError, match="definitions, not the checks"):
        splice_checks([check], {"test_x.py": SOURCE}, wrapped)
    mixed = "```python\nassert json.dumps(1) == '1.0'\ndef helper():\n    return 1\n```"
    with pytest.raises(SpliceError, match="definition"):
        splice_checks([check], {"test_x.py": SOURCE}, mixed)


def test_a_check_that_no_longer_calls_the_code_it_checked_is_refused() -> None:
    # `assert True` keeps the count of checks and checks nothing
    check = Check("test_x.py", "test_dump", 5, 5, "    assert json.dumps(1) == '1'", "")
    with pytest.raises(SpliceError, match="no longer calls `dumps`"):
        splice_checks([check], {"test_x.py": SOURCE}, "```python\nassert True\n```")
    out = applied(SOURCE, splice_checks([check], {"test_x.py": SOURCE},
                                        "```python\nassert json.dumps(1.0) == '1.0'\n```"))
    assert "    assert json.dumps(1.0) == '1.0'\n" in out


def test_a_test_file_that_did_not_load_because_the_code_it_imports_does_not_parse_has_no_check() -> None:
    # the bench's matrix project (bf93d33): matrix.py never parsed, and a round asked four times about
    # `from matrix import add, transpose`, the test's line the traceback went through
    test = "from matrix import add, transpose\n\n\ndef test_add():\n    assert add([[1]], [[2]]) == [[3]]\n"
    frames = ("/usr/lib/python3/dist-packages/_pytest/python.py:618: in _importtestmodule\n"
              "    mod = import_path(self.path)\n<frozen importlib._bootstrap>:1206: in _gcd_import\n    ???\n"
              "tests/test_matrix.py:1: in <module>\n    from matrix import add, transpose\n")
    broken = frames + ('E     File "/workspace/matrix.py", line 32\nE       """\nE       ^\n'
                       "E   SyntaxError: unterminated triple-quoted string literal (detected at line 40)\n")
    loading = TestFailure(test_id="tests/test_matrix.py", file="tests/test_matrix.py", kind="error",
                          message="collection failure", traceback=broken)
    assert failing_checks(TestReport(errors=1, failures=[loading]), {"tests/test_matrix.py": test}, TESTS) == []
    # the test file's own error, or a name the code does not have, is the test's line to look at
    for tail in ('E     File "/workspace/tests/test_matrix.py", line 1\nE   SyntaxError: invalid syntax\n',
                 "E   ImportError: cannot import name 'transpose' from 'matrix' (/workspace/matrix.py)\n"):
        own = loading.model_copy(update={"traceback": frames + tail})
        [check] = failing_checks(TestReport(errors=1, failures=[own]), {"tests/test_matrix.py": test}, TESTS)
        assert (check.start_line, check.test) == (1, "loading the file")


def test_a_checks_reply_that_rewrote_the_code_is_that_codes_candidate(tmp_path: Path) -> None:
    todo = "from dataclasses import dataclass\n\n\n@dataclass\nclass Todo:\n    id: int\n    title: str\n"
    test = "from todo import Todo\n\n\ndef test_make():\n    item = Todo(title='T')\n    assert item.title == 'T'\n"
    copy = WorkingCopy(tmp_path, {"todo.py": todo.encode(), "tests/test_todo.py": test.encode()})
    error = TestFailure(test_id="tests/test_todo.py::test_make", file="tests/test_todo.py", line=5,
                        message="TypeError: Todo.__init__() missing 1 required positional argument: 'id'",
                        traceback="tests/test_todo.py:5: TypeError")
    report = TestReport(failed=1, failures=[error])
    checks = failing_checks(report, {"tests/test_todo.py": test}, TESTS)
    top = Location("todo.py", "Todo", "class", 4, 7, 1.0, "message")
    rung = next(s for s in ladder([top], report, copy, TESTS, checks=checks) if s.route == "checks")
    # asked for the check, the model decided the code is wrong and wrote the class out again
    fixed = "The id should have a default.\n```python\n@dataclass\nclass Todo:\n    title: str\n    id: int = 0\n```"
    plan = read_reply(rung, copy, fixed, TESTS.is_test)
    assert [a.path for a in plan.actions] == ["todo.py"] and "rewrote the code" in plan.diagnosis
    assert "    id: int = 0" in applied(todo, plan.actions) and "Todo(title='T')" in test
    # the code as it is, or a test function in place of the check: nothing to try, said as before
    with pytest.raises(ReplyRejected, match="gives definitions, not the checks"):
        read_reply(rung, copy, f"```python\n{todo}```", TESTS.is_test)
    with pytest.raises(ReplyRejected, match="gives definitions, not the checks"):
        read_reply(rung, copy, "```python\ndef test_make():\n    assert Todo(1, 'T').title == 'T'\n```", TESTS.is_test)


def test_a_check_whose_call_ran_keeps_its_arguments_and_one_the_code_refused_may_change_them() -> None:
    # roman (bf93d33, repeat 2): `from_roman("MMMXCIIX")` did not raise, and the checks rung made it `from_roman("")`
    source = ("import pytest\n\n\ndef test_from_roman():\n    assert from_roman('X') == 10\n"
              "    with pytest.raises(ValueError):\n        from_roman('MMMXCIIX')\n")
    ran = TestFailure(test_id="test_x.py::test_from_roman", file="test_x.py", line=6,
                      message="Failed: DID NOT RAISE <class 'ValueError'>", traceback="test_x.py:6: Failed")
    [check] = failing_checks(TestReport(failed=1, failures=[ran]), {"test_x.py": source}, TESTS)
    with pytest.raises(SpliceError, match="no longer asks `from_roman\\(\"MMMXCIIX\"\\)`"):
        splice_checks([check], {"test_x.py": source}, '```python\nwith pytest.raises(ValueError):\n    from_roman("")\n```')
    # the expectation itself may change (quotes and spaces aside, the call is the same)
    [edit] = splice_checks([check], {"test_x.py": source}, '```python\nassert from_roman( "MMMXCIIX" ) == 3089\n```')
    assert "assert from_roman( \"MMMXCIIX\" ) == 3089" in edit.replace
    # a call the code refused (a TypeError at the call) is the check's to correct, arguments and all
    made = "def test_make():\n    item = Todo(title='T')\n    assert item.title == 'T'\n"
    refused = TestFailure(test_id="test_x.py::test_make", file="test_x.py", line=2, traceback="test_x.py:2: TypeError",
                          message="TypeError: Todo.__init__() missing 1 required positional argument: 'id'")
    [check] = failing_checks(TestReport(failed=1, failures=[refused]), {"test_x.py": made}, TESTS)
    [edit] = splice_checks([check], {"test_x.py": made}, "```python\nitem = Todo(1, title='T')\n```")
    assert "item = Todo(1, title='T')" in edit.replace
