"""The ladder of approaches: what a round that brought nothing better tries next."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.approach import ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.file_form import whole_file
from greenloop.agent.repair.ladder import ladder
from greenloop.agent.repair.prompts import failing_test_targets, repair_messages
from greenloop.agent.repair.rungs.properties import property_reply
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Location, RepoIndex, Signal
from greenloop_sandbox import TestFailure, TestReport

ONE = "import math\n\n\ndef area(r):\n    return math.pi * r\n"
TWO = "def area(r):\n    return 3.14 * r\n\n\ndef perimeter(r):\n    return 2 * 3.14 * r\n\n\ndef unit():\n    return 'cm'\n"
TEST = "from shapes import area\n\n\ndef test_area():\n    assert area(1) == 3.14\n"


def steps(tmp_path: Path, source: str) -> list[tuple[str, str]]:
    copy = WorkingCopy(tmp_path, {"shapes.py": source.encode(), "test_shapes.py": TEST.encode()})
    start = source.splitlines().index("def area(r):") + 1
    top = Location("shapes.py", "area", "function", start, start + 1, 1.0, "frames")
    found = ladder([top], TestReport(failed=1), copy, TestFiles())
    return [(a.route, a.why) for a in found]


def test_a_file_that_is_the_function_gets_the_function_written_anew_before_blocks(tmp_path: Path) -> None:
    start = [("function", "the top-ranked function"), ("function", "the top-ranked function, sampled hotter")]
    blocks = ("blocks", "changes in several places")
    anew = ("function", "the top-ranked function, written anew from the tests")
    assert steps(tmp_path, ONE) == [*start, anew, blocks]  # the file is the function
    assert steps(tmp_path, TWO) == [*start, blocks]  # the file has more code: no whole-file rung (decision ablation)


async def test_the_anew_request_asks_for_the_function_from_the_tests(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": ONE.encode(), "test_shapes.py": TEST.encode()})
    top = Location("shapes.py", "area", "function", 4, 5, 1.0, "frames")
    fresh = ladder([top], TestReport(failed=1), copy, TestFiles())[2]
    index = RepoIndex()
    await index.update(copy.files())
    prompt = repair_messages(fresh, copy, index, TestReport(failed=1), TestFiles(), template="python",
                             workspace=tmp_path)[-1]["content"]
    assert "Write `area` again" in prompt and "Find the bug" not in prompt
    assert "The tests are right: do not change them." in prompt  # fix: the tests are the spec
    assert "return math.pi * r" in prompt  # the current code is still shown
    plan = read_reply(fresh, copy, "```python\ndef area(r):\n    return math.pi * r * r\n```\n")  # read as a function
    assert [a.path for a in plan.actions] == ["shapes.py"]


def test_a_whole_file_reply_that_is_the_file_is_an_echo_not_a_failed_apply(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": TWO.replace("\n", "\r\n").encode(), "test_shapes.py": TEST.encode()})
    whole = whole_file("shapes.py", "the code does not load")  # the broken-file rung's and the baseline's form
    with pytest.raises(ReplyUnchanged, match="is the file as it is"):  # CRLF on disk, LF in the reply
        read_reply(whole, copy, f"The file is right.\n```python\n{TWO}\n```\n")
    plan = read_reply(whole, copy, f"```python\n{TWO.replace('3.14 * r', '3.14 * r * r', 1)}```\n")
    assert [a.path for a in plan.actions] == ["shapes.py"]


def test_a_module_that_is_not_installed_is_installed_first_by_its_package_name(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": ONE.encode(), "test_shapes.py": TEST.encode()})
    top = Location("shapes.py", "area", "function", 4, 5, 1.0, "frames")

    def first(message: str) -> tuple[str, str]:
        report = TestReport(failed=1, failures=[TestFailure(test_id="test_shapes.py::test_area", message=message)])
        step = ladder([top], report, copy, TestFiles())[0]
        return step.route, getattr(step.form, "package", "")  # the install form carries its package

    assert first("ModuleNotFoundError: No module named 'yaml'") == ("install", "pyyaml")  # the language's alias
    assert first("ModuleNotFoundError: No module named 'requests.adapters'") == ("install", "requests")
    assert first("ModuleNotFoundError: No module named 'shapes'")[0] == "function"  # the project's own


def test_tests_that_may_change_are_a_rung_right_after_the_top_function(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": TWO.encode(), "test_shapes.py": TEST.encode()})
    top = Location("shapes.py", "area", "function", 1, 2, 1.0, "frames")
    test = Target("test_shapes.py", "test_area", "function", 4, 5)
    writable = [(a.target.symbol, a.test) for a in
                ladder([top], TestReport(failed=1), copy, TestFiles(writable=True), failing_tests=[test])]
    assert writable[:2] == [("area", False), ("test_area", True)]
    # the tests are the spec (fix's default): never a rung, whatever failing tests there are
    protected = ladder([top], TestReport(failed=1), copy, TestFiles(), failing_tests=[test])
    assert not any(a.test or a.target.path == "test_shapes.py" for a in protected)


async def test_the_test_rung_shows_the_code_under_test_and_keeps_every_check(tmp_path: Path) -> None:
    test_code = "from shapes import area\n\n\ndef test_area():\n    assert area(1) == 3.14\n    assert area(0) == 1\n"
    copy = WorkingCopy(tmp_path, {"shapes.py": TWO.encode(), "test_shapes.py": test_code.encode()})
    index = RepoIndex()
    await index.update(copy.files())
    report = TestReport(failed=1, failures=[TestFailure(test_id="test_shapes.py::test_area", file="test_shapes.py",
                                                        line=6, message="assert 0.0 == 1")])
    tests = TestFiles(writable=True)
    [target] = failing_test_targets(index, report, tests)
    assert (target.symbol, target.start_line, target.end_line) == ("test_area", 4, 6)
    top = Location("shapes.py", "area", "function", 1, 2, 1.0, "frames")
    rung = ladder([top], report, copy, tests, failing_tests=[target])[1]
    prompt = repair_messages(rung, copy, index, report, tests, template="python", workspace=tmp_path)[-1]["content"]
    assert "an expected value in it may be" in prompt and "keep every check" in prompt
    assert "The code it tests:" in prompt and "return 3.14 * r" in prompt  # the body, not just a signature
    kept = "```python\ndef test_area():\n    assert area(1) == 3.14\n    assert area(0) == 0\n```"
    plan = read_reply(rung, copy, kept)
    assert [a.path for a in plan.actions] == ["test_shapes.py"]
    emptied = "```python\ndef test_area():\n    assert area(1) == 3.14\n```"
    with pytest.raises(ReplyRejected, match="has 1 checks where the tests have 2"):
        read_reply(rung, copy, emptied)
    # a prompt for the code (not the test) says the tests were written with it and may be wrong too
    code_prompt = repair_messages(ladder([top], report, copy, tests)[0], copy, index, report, tests,
                                  template="python", workspace=tmp_path)[-1]["content"]
    assert "written with the code: where they disagree, either may be wrong" in code_prompt
    assert "The tests are right" not in code_prompt and "change only the code here" in code_prompt


async def test_what_the_function_calls_is_found_through_its_imports_never_by_name_alone(tmp_path: Path) -> None:
    files = {
        "app/utils.py": "from app import fmt\n\n\ndef option(params, name):\n    value = params.get(name)\n"
                        "    return fmt.flag(name, value) + strip(name)\n\n\ndef strip(text):\n    return text.strip()\n",
        "app/fmt.py": "def flag(name, value):\n    return [name, str(value)]\n",
        "app/extractor/site.py": "def get(section, field):\n    return section[field]\n",
        "test_utils.py": "from app.utils import option\n\n\ndef test_option():\n    assert option({}, 'x') == []\n",
    }
    copy = WorkingCopy(tmp_path, {path: text.encode() for path, text in files.items()})
    index = RepoIndex()
    await index.update(copy.files())
    top = Location("app/utils.py", "option", "function", 4, 6, 1.0, "frames")
    report = TestReport(failed=1, failures=[TestFailure(test_id="test_utils.py::test_option", file="test_utils.py",
                                                        line=5, message="assert ['x', 'None'] == []")])
    prompt = repair_messages(ladder([top], report, copy, TestFiles())[0], copy, index, report, TestFiles(),
                             template="python", workspace=tmp_path)[-1]["content"]
    calls = prompt.split("It calls:\n", 1)[1].split("\n\n", 1)[0]
    assert "def flag(name, value):  (app/fmt.py:1)" in calls  # an imported module's
    assert "def strip(text):  (app/utils.py:9)" in calls  # the same file's
    assert "site.py" not in calls  # `params.get` is a dict's: not the `get` an unrelated module defines
    # the test route's code under test: what the test imports, through the package it names
    test = Target("test_utils.py", "test_option", "function", 4, 5)
    rung = ladder([top], report, copy, TestFiles(writable=True), failing_tests=[test])[1]
    shown = repair_messages(rung, copy, index, report, TestFiles(writable=True), template="python",
                            workspace=tmp_path)[-1]["content"]
    assert "`option` in `app/utils.py`" in shown


def test_a_class_of_fields_ranked_first_is_rewritten_whole_not_another_classes_method(tmp_path: Path) -> None:
    todo = "from dataclasses import dataclass\n\n\n@dataclass\nclass Todo:\n    id: int\n    title: str\n    done: bool\n"
    store = ("from todo import Todo\n\n\nclass TodoList:\n    def __init__(self):\n        self.todos = []\n\n"
             "    def add(self, title):\n        self.todos.append(Todo(len(self.todos), title, False))\n")
    copy = WorkingCopy(tmp_path, {"todo.py": todo.encode(), "store.py": store.encode(), "test_todo.py": b"x = 1\n"})
    # `Todo(title=..., done=False)` failed with "Todo.__init__() missing 1 required positional argument: 'id'"
    ranked = [Location("todo.py", "Todo", "class", 4, 8, 2.0, "message"),
              Location("store.py", "TodoList", "class", 4, 9, 1.8, "module"),
              Location("store.py", "TodoList.__init__", "method", 5, 6, 1.5, "message")]
    steps = ladder(ranked, TestReport(failed=1), copy, TestFiles())
    asked = [(s.route, s.target.symbol) for s in steps]
    assert asked[0] == ("function", "Todo") and ("function", "TodoList") not in asked
    reply = "```python\n@dataclass\nclass Todo:\n    title: str\n    done: bool = False\n    id: int = 0\n```"
    [edit] = read_reply(steps[0], copy, reply).actions
    assert isinstance(edit, EditAction) and edit.path == "todo.py" and "class Todo:\n    id: int" in edit.search
    assert edit.replace.startswith("@dataclass\nclass Todo:\n    title: str")


def test_a_method_read_as_an_attribute_is_found_in_either_of_pytests_ways_of_showing_it(tmp_path: Path) -> None:
    code = ("class Account:\n    def balance(self):\n        return 1\n\n    def history(self, n):\n        return []\n\n"
            "    @staticmethod\n    def bank():\n        return 'b'\n")
    copy = WorkingCopy(tmp_path, {"bank.py": code.encode(), "test_bank.py": b"x = 1\n"})

    def reply(message: str) -> str:
        report = TestReport(failed=1, failures=[TestFailure(test_id="test_bank.py::test_b", message=message)])
        return property_reply(report, copy, TestFiles().is_test)[1]

    repr_form = "assert <bound method Account.balance of <bank.Account object at 0x7f22>> == 1"
    name_form = "assert balance == 1\n +  where balance = <bank.Account object at 0x7f23b8>.balance"
    for message in (repr_form, name_form):
        assert "=======\n    @property\n    def balance(self):\n>>>>>>> REPLACE" in reply(message)
    # a method that takes arguments, or one already decorated, is no property; a value read is no method
    assert reply("assert <bound method Account.history of <bank.Account object at 0x1>> == []") == ""
    assert reply("assert <bound method Account.bank of <bank.Account object at 0x1>> == 'b'") == ""
    assert reply("assert 2 == 1\n +  where 2 = <bank.Account object at 0x7f23b8>.balance") == ""


def test_several_asks_the_top_def_with_its_callees_then_the_path_from_the_test(tmp_path: Path) -> None:
    # the top def is long; its executed callee is asked with it first; then, when it differs, the group that
    # follows the failing test's own calls down (a def reached through a function value); ranked ones last
    big = "def big(x):\n" + "    x += 1\n" * 200 + "    return helper(x)\n"
    small = "def helper(x):\n    return x\n\n\ndef factory():\n    return 1\n\n\ndef rule(x):\n    return x\n"
    copy = WorkingCopy(tmp_path, {"big.py": big.encode(), "small.py": small.encode(), "test_big.py": b""})
    top = Location("big.py", "big", "function", 1, 202, 1.0, "frames")
    callee = Location("small.py", "helper", "function", 1, 2, 0.0, "big calls it", role="callee")
    path = [Location("small.py", "factory", "function", 5, 6, 0.0, "1 call", role="path"),
            Location("small.py", "rule", "function", 9, 10, 0.0, "2 calls", role="path")]
    other = Location("small.py", "rule", "function", 9, 10, 0.5, "ranked", role="ranked")
    found = [a for a in ladder([top, other, *path, callee], TestReport(failed=1), copy, TestFiles())
             if a.why.startswith("the top-ranked functions together")]
    groups = [[t.symbol for t in (a.target, *a.also)] for a in found]
    assert groups == [["big", "helper", "rule"], ["factory", "rule"]]


def test_with_coverage_several_never_groups_the_top_def_with_defs_no_failing_test_ran(tmp_path: Path) -> None:
    # the failing test ran `parse` and `clean`; `save` and `log` rank high on words alone but never ran:
    # a change to them cannot move the test, so no request of several shows them (without coverage, it may)
    source = "".join(f"def {n}(x):\n    return x\n\n\n" for n in ("parse", "save", "clean", "log"))
    copy = WorkingCopy(tmp_path, {"mod.py": source.encode(), "test_mod.py": b""})
    ran = (Signal("executed", 1.0, 0.1, "line 2 ran in 1 of 1 failing tests"),)

    def at(name: str, n: int, role: str = "target", signals: tuple[Signal, ...] = ()) -> Location:
        return Location("mod.py", name, "function", 4 * n + 1, 4 * n + 2, 1.0 - n / 10, "words", role, signals)

    def groups(top: Location) -> list[list[str]]:
        found = [a for a in ladder([top, at("save", 1), at("clean", 2, "ranked", ran), at("log", 3, "ranked")],
                                   TestReport(failed=1), copy, TestFiles()) if "functions together" in a.why]
        return [[t.symbol for t in (a.target, *a.also)] for a in found]

    assert groups(at("parse", 0, signals=ran)) == [["parse", "clean"]]
    assert groups(at("parse", 0)) == [["parse", "save", "clean"], ["log"]]


def test_several_then_asks_the_defs_ranked_past_its_first_group_that_no_request_showed(tmp_path: Path) -> None:
    # a bug in a def ranked 5th: after the top group, the next-ranked defs are asked a group at a time,
    # each def once, one alone too (rungs/next_ranked.py); else the run stops "stuck" with rounds left
    source = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(8))
    copy = WorkingCopy(tmp_path, {"mod.py": source.encode(), "test_mod.py": b""})
    ranked = [Location("mod.py", f"f{n}", "function", 4 * n + 1, 4 * n + 2, 1.0 - n / 10, "frames",
                       role="target" if n == 0 else "ranked") for n in range(8)]
    found = [a for a in ladder(ranked, TestReport(failed=1), copy, TestFiles()) if a.route == "function"
             and "functions together" in a.why]
    groups = [(a.why.split()[1], [t.symbol for t in (a.target, *a.also)]) for a in found]
    assert groups == [("top-ranked", ["f0", "f1", "f2"]), ("next-ranked", ["f3", "f4", "f5"]),
                      ("next-ranked", ["f6", "f7"])]
