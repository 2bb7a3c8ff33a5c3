"""When the rung "missing name" applies (rungs/missing_name.py): a name a project module lacks that the project
defines nowhere, in either of Python's words for it; never a package's module, a test module or a name defined elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.approach import ReplyRejected, read_reply
from greenloop.agent.repair.ladder_rung import LadderState
from greenloop.agent.repair.rungs.missing_name import RUNG
from greenloop_sandbox import TestFailure, TestReport

ERRORS = "class AppError(Exception):\n    pass\n"
TEST = "from app.errors import Missing\n\n\ndef test_it():\n    assert Missing\n"


def asked(tmp_path: Path, message: str, files: dict[str, str]) -> list[tuple[str, str]]:
    copy = WorkingCopy(tmp_path, {p: t.encode() for p, t in {"tests/test_it.py": TEST, **files}.items()})
    report = TestReport(errors=1, failures=[TestFailure(test_id="tests/test_it.py", kind="error", message=message)])
    return [(a.target.path, a.why) for a in RUNG.applies(LadderState([], report, copy, TestFiles()))]


@pytest.mark.parametrize("message", [
    "ImportError: cannot import name 'Missing' from 'app.errors' (/workspace/src/app/errors.py)",
    "AttributeError: module 'app.errors' has no attribute 'Missing'",
])
def test_a_name_defined_nowhere_is_asked_for_in_its_module_under_any_folder(tmp_path: Path, message: str) -> None:
    files = {"src/app/__init__.py": "", "src/app/errors.py": ERRORS}
    assert asked(tmp_path, message, files) == [("src/app/errors.py", "the tests use `Missing`, which `app.errors` lacks")]


def test_a_package_module_a_test_module_or_a_name_defined_elsewhere_is_not_asked_for(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/errors.py": ERRORS}
    assert asked(tmp_path, "AttributeError: module 'os' has no attribute 'Missing'", files) == []
    assert asked(tmp_path, "AttributeError: module 'tests.test_it' has no attribute 'Missing'", files) == []
    elsewhere = {**files, "app/other.py": "class Missing(Exception):\n    pass\n"}
    assert asked(tmp_path, "cannot import name 'Missing' from 'app.errors'", elsewhere) == []
    assigned = {**files, "app/other.py": "Missing = KeyError\n"}
    assert asked(tmp_path, "cannot import name 'Missing' from 'app.errors'", assigned) == []


def test_the_reply_may_change_that_module_only(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"app/__init__.py": b"", "app/errors.py": ERRORS.encode(), "tests/test_it.py": TEST.encode()})
    report = TestReport(errors=1, failures=[TestFailure(
        test_id="tests/test_it.py", kind="error", message="cannot import name 'Missing' from 'app.errors'")])
    [approach] = RUNG.applies(LadderState([], report, copy, TestFiles()))
    block = "<<<<<<< SEARCH\n    pass\n=======\n    pass\n\n\nclass Missing(AppError):\n    pass\n>>>>>>> REPLACE\n"
    plan = read_reply(approach, copy, f"app/errors.py\n{block}")
    assert [(a.path, a.kind) for a in plan.actions] == [("app/errors.py", "edit")]
    assert isinstance(plan.actions[0], EditAction) and "class Missing(AppError)" in plan.actions[0].replace
    with pytest.raises(ReplyRejected, match=r"only `app/errors\.py` may change here"):
        read_reply(approach, copy, f"tests/test_it.py\n{block}")
