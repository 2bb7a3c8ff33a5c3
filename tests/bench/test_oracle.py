"""The oracle model: over real HTTP with the real `openai` client, it answers with the reference def only
for the fix's defs a request shows, in the form the request asks (the prompts are the loop's own)."""

from __future__ import annotations

import asyncio
import difflib
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction, WriteAction
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.file_form import whole_file
from greenloop.agent.repair.ladder_rung import LadderState
from greenloop.agent.repair.prompts import render_failures, repair_messages
from greenloop.agent.repair.rungs.blocks import blocks_on
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.rungs.region import REGION, WHY
from greenloop.agent.repair.rungs.several import SEVERAL
from greenloop.agent.repair.splice import Target
from greenloop.bench.oracle import ORACLE, PROSE
from greenloop.bench.oracle_server import OracleServer, case_url
from greenloop.bench.realbugs import realbugs_task
from greenloop.bench.suites import humanevalfix_task
from greenloop.retrieval import Location, RepoIndex
from greenloop.retrieval.packing import pack_code
from greenloop_sandbox import TestFailure, TestReport

PATH = "geometry/shapes.py"
BUGGY = '''import math


class Circle:
    def __init__(self, r):
        self.r = r

    def area(self):
        """The circle's area."""
        return 3.14 * self.r

    def scale(self, k):
        return Circle(self.r * k)


def perimeter(r):
    return 2 * math.pi * r


def ratio(a, b):
    return a / b
'''
FIXED = BUGGY.replace("import math\n", "import math\nfrom math import inf\n").replace(
    "return 3.14 * self.r\n", "return math.pi * self.r ** 2\n").replace(
    "return a / b\n", "return a / b if b else inf\n")
TEST = "from geometry.shapes import Circle, ratio\n\n\ndef test_area():\n    assert Circle(1).area() == 3.141592653589793\n"
REPORT = TestReport(failed=1, failures=[TestFailure(
    test_id="tests/test_shapes.py::test_area", file="tests/test_shapes.py", line=5,
    message="assert 3.14 == 3.141592653589793", traceback="tests/test_shapes.py:5: AssertionError")])


def case_folder(tmp_path: Path) -> Path:
    """A realbugs-style case: its workspace tarball under one top folder, and the developers' patch."""
    folder = tmp_path / "set"
    work = tmp_path / "pack" / "shapes-1"
    for path, text in {PATH: BUGGY, "geometry/__init__.py": "", "tests/test_shapes.py": TEST}.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    (folder / "cases" / "shapes-1").mkdir(parents=True)
    with tarfile.open(folder / "cases" / "shapes-1" / "workspace.tar.gz", "w:gz") as tar:
        tar.add(work, arcname="shapes-1")
    patch = "".join(difflib.unified_diff(BUGGY.splitlines(True), FIXED.splitlines(True), f"a/{PATH}", f"b/{PATH}"))
    (folder / "cases" / "shapes-1" / "fix.patch").write_text(f"diff --git a/{PATH} b/{PATH}\n{patch}")
    return folder


@pytest.fixture
def oracle(tmp_path: Path) -> Iterator[OracleServer]:
    task = realbugs_task({"id": "shapes-1", "tests": ["tests/test_shapes.py::test_area"]}, case_folder(tmp_path))
    row = {"task_id": "Python/0", "entry_point": "add", "declaration": "def add(a, b):\n",
           "buggy_solution": "    return a - b\n", "canonical_solution": "    return a + b\n", "test": "def check(f):\n    assert f(1, 2) == 3\n"}
    server = OracleServer([task, humanevalfix_task(row)]).start()
    try:
        yield server
    finally:
        server.stop()


def ask(server: OracleServer, case: str, messages: list[dict[str, str]], *, stream: bool = False) -> str:
    client = openai.OpenAI(base_url=case_url(server.base_url, case), api_key="unused", max_retries=0)
    try:
        if not stream:
            done = client.chat.completions.create(model=ORACLE, messages=messages)  # type: ignore[arg-type]
            return done.choices[0].message.content or ""
        parts = client.chat.completions.create(model=ORACLE, messages=messages, stream=True)  # type: ignore[arg-type]
        return "".join(chunk.choices[0].delta.content or "" for chunk in parts if chunk.choices)  # type: ignore[union-attr]
    finally:
        client.close()


def workspace(tmp_path: Path) -> tuple[WorkingCopy, RepoIndex]:
    copy = WorkingCopy(tmp_path, {PATH: BUGGY.encode(), "geometry/__init__.py": b"", "tests/test_shapes.py": TEST.encode()})
    index = RepoIndex(workers=1)
    asyncio.run(index.update(copy.files()))
    return copy, index


def prompt(approach: Approach, copy: WorkingCopy, index: RepoIndex, tmp_path: Path) -> list[dict[str, str]]:
    return repair_messages(approach, copy, index, REPORT, TestFiles(), template="python", workspace=tmp_path)


def applied(copy: WorkingCopy, plan: DebugPlan) -> str:
    text = copy.read(PATH) or ""
    for action in plan.actions:
        if isinstance(action, WriteAction):
            text = action.content
        elif isinstance(action, EditAction):
            assert text.count(action.search) == 1, action.search
            text = text.replace(action.search, action.replace)
    return text


def function(symbol: str) -> Approach:
    start = next(n for n, row in enumerate(BUGGY.splitlines(), 1) if f"def {symbol.rsplit('.', 1)[-1]}(" in row)
    end = start + (2 if symbol != "Circle.scale" else 1)
    kind = "method" if "." in symbol else "function"
    return Approach(FUNCTION, Target(PATH, symbol, kind, start, end), "the top-ranked function")


def test_a_function_of_the_fix_is_answered_with_the_reference_def_and_only_the_import_it_needs(
        oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    asked = function("Circle.area")
    reply = ask(oracle, "shapes-1", prompt(asked, copy, index, tmp_path), stream=True)
    text = applied(copy, read_reply(asked, copy, reply))
    assert "return math.pi * self.r ** 2" in text and "from math import inf" not in text  # area needs no `inf`
    assert "return a / b\n" in text  # the other def of the fix was not shown: it stays buggy
    other = function("ratio")
    text = applied(copy, read_reply(other, copy, ask(oracle, "shapes-1", prompt(other, copy, index, tmp_path))))
    assert "return a / b if b else inf" in text and "from math import inf" in text  # the import it needs comes along
    assert "return 3.14 * self.r" in text


def test_a_function_that_is_not_in_the_fix_is_given_back_as_it_is(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    for symbol in ("Circle.scale", "perimeter"):
        asked = function(symbol)
        reply = ask(oracle, "shapes-1", prompt(asked, copy, index, tmp_path))
        with pytest.raises(ReplyUnchanged):
            read_reply(asked, copy, reply)


def test_a_region_request_gets_the_lines_the_fix_changes_inside_the_def_it_shows(
        oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    area = Approach(REGION, function("Circle.area").target, WHY)  # the form, whatever the def's length
    reply = ask(oracle, "shapes-1", prompt(area, copy, index, tmp_path), stream=True)
    assert "<<<<<<< SEARCH\n" in reply and "        return 3.14 * self.r\n=======\n" in reply and "def area" not in reply
    text = applied(copy, read_reply(area, copy, reply))
    assert text == BUGGY.replace("return 3.14 * self.r\n", "return math.pi * self.r ** 2\n")  # that def alone
    for symbol in ("Circle.scale", "perimeter"):  # not in the fix: a line given back as it was
        asked = Approach(REGION, function(symbol).target, WHY)
        with pytest.raises(ReplyUnchanged):
            read_reply(asked, copy, ask(oracle, "shapes-1", prompt(asked, copy, index, tmp_path)))


def test_blocks_and_the_whole_file_give_every_def_of_the_fix_the_file_shows(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    state = LadderState([], REPORT, copy, TestFiles())
    blocks = blocks_on(PATH, "changes in several places", state)
    reply = ask(oracle, "shapes-1", prompt(blocks, copy, index, tmp_path), stream=True)
    assert "<<<<<<< SEARCH" in reply
    assert applied(copy, read_reply(blocks, copy, reply)) == FIXED
    whole = whole_file(PATH, "the code does not load")
    assert applied(copy, read_reply(whole, copy, ask(oracle, "shapes-1", prompt(whole, copy, index, tmp_path)))) == FIXED


def test_a_partial_state_is_mended_from_what_the_request_shows(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    copy.write(PATH, BUGGY.replace("return 3.14 * self.r", "return 3.15 * self.r"))  # a small edit kept before
    asyncio.run(index.update(copy.files()))
    state = LadderState([], REPORT, copy, TestFiles())
    blocks = blocks_on(PATH, "changes in several places", state)
    text = applied(copy, read_reply(blocks, copy, ask(oracle, "shapes-1", prompt(blocks, copy, index, tmp_path))))
    assert text == FIXED


def test_several_defs_shown_together_get_each_def_of_the_fix_they_show(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    area, scale, ratio = function("Circle.area"), function("Circle.scale"), function("ratio")
    asked = Approach(SEVERAL, area.target, "the top-ranked functions together", also=(scale.target, ratio.target))
    reply = ask(oracle, "shapes-1", prompt(asked, copy, index, tmp_path), stream=True)
    text = applied(copy, read_reply(asked, copy, reply))
    assert "return math.pi * self.r ** 2" in text and "return a / b if b else inf" in text
    assert "return Circle(self.r * k)" in text  # shown, not in the fix: as it was
    alone = Approach(SEVERAL, scale.target, "the top-ranked functions together", also=(function("perimeter").target,))
    with pytest.raises(ReplyUnchanged):
        read_reply(alone, copy, ask(oracle, "shapes-1", prompt(alone, copy, index, tmp_path)))


def test_a_debug_plan_request_gets_edits_for_the_defs_its_context_shows(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    shown = [Location(PATH, "Circle.area", "method", 8, 10, 1.0, "frames")]
    context = pack_code(index, shown, budget_tokens=2000, failure_text=False).text
    user = render_prompt("plan", tmp_path, template="python", failures=render_failures(REPORT), context=context,
                         history="", diagnosis="", instruction="")
    reply = json.loads(ask(oracle, "shapes-1", [{"role": "user", "content": user}]))
    plan = DebugPlan.model_validate(reply)
    text = applied(copy, plan)
    assert "return math.pi * self.r ** 2" in text and "return a / b\n" in text  # only the def it was shown
    other = [Location(PATH, "perimeter", "function", 16, 17, 1.0, "frames")]
    context = pack_code(index, other, budget_tokens=2000, failure_text=False).text
    user = render_prompt("plan", tmp_path, template="python", failures=render_failures(REPORT), context=context,
                         history="", diagnosis="", instruction="")
    assert json.loads(ask(oracle, "shapes-1", [{"role": "user", "content": user}]))["actions"] == []


def test_humanevalfix_gets_the_canonical_solution(oracle: OracleServer, tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"add.py": b"def add(a, b):\n    return a - b\n"})
    index = RepoIndex(workers=1)
    asyncio.run(index.update(copy.files()))
    asked = Approach(FUNCTION, Target("add.py", "add", "function", 1, 2), "the top-ranked function")
    reply = ask(oracle, "Python/0", repair_messages(asked, copy, index, REPORT, TestFiles(), template="python",
                                                      workspace=tmp_path))
    assert "return a + b" in (read_reply(asked, copy, reply).actions[0].replace)  # type: ignore[union-attr]


def test_a_request_it_cannot_map_to_a_case_gets_prose(oracle: OracleServer, tmp_path: Path) -> None:
    copy, index = workspace(tmp_path)
    asked = function("Circle.area")
    messages = prompt(asked, copy, index, tmp_path)
    for case in ("no-such-case", "Python/0"):  # unknown, or a case whose fix this request does not show
        reply = ask(oracle, case, messages)
        with pytest.raises(ReplyRejected):
            read_reply(asked, copy, reply)
    assert ask(oracle, "no-such-case", messages) == PROSE

