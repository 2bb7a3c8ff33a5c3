"""The oracle's knowledge of a fix (bench/oracle_fix.py), on every realbugs case on disk: the fixed files are
rebuilt exactly from the fix's defs and its changes outside defs, and each def alone from its buggy text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from greenloop.agent.changes.same_code import same_code
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.approach import read_reply
from greenloop.agent.repair.ladder_rung import LadderState
from greenloop.agent.repair.prompts import repair_messages
from greenloop.agent.repair.region_edits import region_edits
from greenloop.agent.repair.rungs.missing_name import RUNG as MISSING_NAME
from greenloop.agent.repair.splice import Target, splice
from greenloop.bench.oracle import answer, hunks
from greenloop.bench.oracle_fix import DefFix, ReferenceFix, Span, spans
from greenloop.bench.oracle_server import reference_of
from greenloop.bench.suites import load_suite, repo_root
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestFailure, TestReport

CASES = repo_root() / "benchmarks" / "data" / "realbugs" / "cases.jsonl"


def fixes() -> list[tuple[str, ReferenceFix]]:
    suite = load_suite("realbugs", CASES)  # the cases whose workspaces are on disk (the rest are skipped rows)
    return [(task.id, fix) for task in suite.tasks if (fix := reference_of(task)) is not None]


def buggy_def(fix: ReferenceFix, d: DefFix) -> tuple[Span, str]:
    """Where the fix's def `d` is in its buggy file, and its text there (as a request shows it)."""
    span = next(s for s in spans(fix.buggy[d.path]) if (s.symbol, s.nth) == (d.symbol, d.nth))
    return span, "\n".join(fix.buggy[d.path].split("\n")[span.start - 1 : span.end])


def changes_code(fix: ReferenceFix, d: DefFix) -> bool:
    """Whether the fix changes `d`'s code, not only its comments or spacing (tqdm-9 respaces `# pragma` comments
    in two defs): the loop rightly rejects a reply that gives such a def back as changing nothing (same_code.py)."""
    shown = buggy_def(fix, d)[1]
    scope = d.symbol.rsplit(".", 1)[0] if "." in d.symbol else ""
    return not same_code(d.path, shown, fix.mend(d.path, shown, scope=scope))


@pytest.fixture(scope="module")
def all_fixes() -> list[tuple[str, ReferenceFix]]:
    return fixes()


def test_every_fix_is_rebuilt_from_its_parts(all_fixes: list[tuple[str, ReferenceFix]]) -> None:
    assert len(all_fixes) >= 49
    wrong = [(case, path) for case, fix in all_fixes for path in fix.paths()
             # a changed last line keeps the shortcut for "the file as it was" from answering
             if fix.mend(path, fix.buggy[path] + "\n#", whole=True).removesuffix("\n#") != fix.fixed[path]]
    assert wrong == []


def test_every_def_of_a_fix_is_mended_from_its_buggy_text_alone(all_fixes: list[tuple[str, ReferenceFix]]) -> None:
    wrong = []
    for case, fix in all_fixes:
        for d in fix.defs:
            _, shown = buggy_def(fix, d)
            scope = d.symbol.rsplit(".", 1)[0] if "." in d.symbol else ""
            mended = fix.mend(d.path, shown, scope=scope)
            # as the developers' file has it, at its indentation (a multi-line string's later lines as written)
            if mended.strip("\n") not in fix.fixed[d.path]:
                wrong.append((case, d.symbol))
    assert wrong == []


def test_the_blocks_of_every_fix_apply_one_after_another(all_fixes: list[tuple[str, ReferenceFix]]) -> None:
    """As the loop applies a reply's SEARCH/REPLACE blocks: in order, each search found once (youtube-dl-14's fix
    moves a def, and a block's text, unique before, was there twice once the block before it was in)."""
    wrong = []
    for case, fix in all_fixes:
        for path in fix.paths():
            text = fix.buggy[path]
            for old, new in hunks(text, fix.fixed[path]):
                if text.count(old) != 1:
                    wrong.append((case, path))
                    break
                text = text.replace(old, new, 1)
            else:
                if text != fix.fixed[path]:
                    wrong.append((case, path))
    assert wrong == []


def test_every_def_of_a_fix_asked_as_a_region_comes_back_as_blocks_that_the_loop_applies_inside_it(
        all_fixes: list[tuple[str, ReferenceFix]]) -> None:
    """The region form (rungs/region.py): the oracle's blocks for each def, read by the loop's own reader
    (region_edits.py) on the buggy file, give that def as the function form's answer does."""
    wrong = []
    for case, fix in all_fixes:
        for d in filter(lambda d: changes_code(fix, d), fix.defs):
            span, shown = buggy_def(fix, d)
            request = f"## The function to fix: `{d.symbol}` in `{d.path}` (lines {span.start}-{span.end})\n```python\n{shown}\n```\n"
            reply = answer(fix, [{"role": "user", "content": request}])
            target = Target(d.path, d.symbol, "function", span.start, span.end)
            try:
                [edit] = region_edits(fix.buggy[d.path], target, reply)
            except ValueError as exc:
                wrong.append((case, d.symbol, str(exc)))
                continue
            assert fix.buggy[d.path].count(edit.search) == 1
            after = fix.buggy[d.path].replace(edit.search, edit.replace)
            scope = d.symbol.rsplit(".", 1)[0] if "." in d.symbol else ""
            mended = fix.mend(d.path, shown, scope=scope)
            if mended not in after:
                wrong.append((case, d.symbol, "not the fixed def"))
    assert len(wrong) == 0, wrong


def test_every_def_of_a_fix_asked_as_a_function_is_spliced_by_the_loop_into_the_reference_def(
        all_fixes: list[tuple[str, ReferenceFix]]) -> None:
    """The function form (rungs/function.py): the oracle's reply for each def, spliced by the loop's own splice
    (splice.py) into the buggy file, gives the reference def as written (tqdm-5's `tqdm.__init__` holds a warning
    whose later lines are at column 0: re-indented, the string's text changed)."""
    wrong = []
    for case, fix in all_fixes:
        for d in filter(lambda d: changes_code(fix, d), fix.defs):
            span, shown = buggy_def(fix, d)
            request = f"## The code to fix: `{d.symbol}` in `{d.path}` (lines {span.start}-{span.end})\n```python\n{shown}\n```\n"
            reply = answer(fix, [{"role": "user", "content": request}])
            target = Target(d.path, d.symbol, "function", span.start, span.end)
            try:
                edits = splice(fix.buggy[d.path], target, reply)
            except ValueError as exc:
                wrong.append((case, d.symbol, str(exc)))
                continue
            after = fix.buggy[d.path]
            for edit in edits:
                assert after.count(edit.search) == 1
                after = after.replace(edit.search, edit.replace)
            scope = d.symbol.rsplit(".", 1)[0] if "." in d.symbol else ""
            mended = fix.mend(d.path, shown, scope=scope)
            if mended.strip("\n") not in fix.fixed[d.path]:
                wrong.append((case, d.symbol, "the oracle's def is not the developers'"))
            elif mended.strip("\n") not in after:
                wrong.append((case, d.symbol, "not the fixed def"))
    assert wrong == []


def test_a_def_changed_inside_another_is_its_own_and_a_twice_defined_function_is_told_apart() -> None:
    buggy = ("import os\nif os.name == 'nt':\n    def lock(f):\n        return 1\nelse:\n    def lock(f):\n        return 2\n\n\n"
             "def outer(x):\n    def inner(y):\n        return y - 1\n    return inner(x)\n")
    fixed = buggy.replace("return 2", "return 3").replace("return y - 1", "return y + 1")
    fix = ReferenceFix.of({"m.py": buggy}, {"m.py": fixed})
    assert [(d.symbol, d.nth) for d in fix.defs] == [("lock", 1), ("outer.inner", 0)]
    assert fix.mend("m.py", buggy, whole=True) == fixed
    assert fix.mend("m.py", "def outer(x):\n    def inner(y):\n        return y - 1\n    return inner(x)\n") == (
        "def outer(x):\n    def inner(y):\n        return y + 1\n    return inner(x)\n")  # the outer def shown: its inner mended


def test_defs_of_one_name_and_header_shown_one_at_a_time_are_told_apart_by_their_bodies() -> None:
    """A `callback` in each branch of an `if` inside one function, both changed: a request that shows one of them
    alone (as a ranked def is shown) gets that one's fix, not the first one's."""
    buggy = ("def main(update):\n    if update:\n        def callback(i):\n            t.update(numeric(i))\n"
             "    else:\n        def callback(i):\n            t.update(numeric(i) - t.n)\n    return callback\n")
    fixed = buggy.replace("numeric(i)", "numeric(i.decode())")
    fix = ReferenceFix.of({"m.py": buggy}, {"m.py": fixed})
    assert [(d.symbol, d.nth) for d in fix.defs] == [("main.callback", 0), ("main.callback", 1)]
    second = "def callback(i):\n    t.update(numeric(i) - t.n)\n"
    assert fix.mend("m.py", second, scope="main") == "def callback(i):\n    t.update(numeric(i.decode()) - t.n)\n"
    first = "def callback(i):\n    t.update(numeric(i))\n"
    assert fix.mend("m.py", first, scope="main") == "def callback(i):\n    t.update(numeric(i.decode()))\n"


def test_a_request_to_add_a_name_the_tests_need_is_answered_with_the_fixs_change_of_that_module(tmp_path: Path) -> None:
    """The rung "missing name" (rungs/missing_name.py) shows the module whole and asks for blocks: the oracle
    answers with the developers' change outside defs there (cookiecutter-4 adds an exception class)."""
    errors = 'class AppError(Exception):\n    """Base."""\n'
    added = errors + '\n\nclass HookFailed(AppError):\n    """A hook failed."""\n'
    ages = "import errors\n\n\ndef run(hook):\n    return hook()\n"
    test = "import pytest\n\nimport errors\nfrom ages import run\n\n\ndef test_run():\n" \
           "    pytest.raises(errors.HookFailed, run, lambda: 1)\n"
    fix = ReferenceFix.of({"errors.py": errors, "ages.py": ages},
                          {"errors.py": added, "ages.py": ages.replace("return hook()", "raise errors.HookFailed()")})
    copy = WorkingCopy(tmp_path, {"errors.py": errors.encode(), "ages.py": ages.encode(),
                                  "tests/test_ages.py": test.encode()})
    report = TestReport(failed=1, failures=[TestFailure(
        test_id="tests/test_ages.py::test_run", file="tests/test_ages.py", line=8,
        message="AttributeError: module 'errors' has no attribute 'HookFailed'",
        traceback="tests/test_ages.py:8: AttributeError")])
    [asked] = MISSING_NAME.applies(LadderState([], report, copy, TestFiles()))
    index = RepoIndex(workers=1)
    asyncio.run(index.update(copy.files()))
    messages = repair_messages(asked, copy, index, report, TestFiles(), template="python", workspace=tmp_path)
    plan = read_reply(asked, copy, answer(fix, messages))
    text = errors
    for action in plan.actions:
        assert isinstance(action, EditAction) and action.path == "errors.py" and text.count(action.search) == 1
        text = text.replace(action.search, action.replace)
    assert text == added
