"""The region rung (rungs/region.py, region_edits.py): a long function is asked for its changed lines, the reply's
blocks apply inside that function only, and every reply it cannot use is refused with its reason (real tree-sitter)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.ladder import ladder
from greenloop.agent.repair.prompts import repair_messages
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.rungs.region import LONG_TOKENS, REGION, REGION_TOKENS, WHY
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Location, RepoIndex
from greenloop.tokens import count_text
from greenloop_sandbox import TestFailure, TestReport

PATH = "report.py"
FIELDS = 149


def long_class(newline: str = "\n") -> str:
    """A class whose method `summarize` is 300 lines: field 75's total is computed and never stored."""
    rows = ["import math", "", "", "class Report:", "    def summarize(self, rows):",
            '        """The totals of a report, field by field."""', "        out = {}"]
    for n in range(FIELDS):
        rows.append(f'        total_{n} = sum(row.get("f{n}", 0) for row in rows)')
        if n != 75:
            rows.append(f'        out["f{n}"] = total_{n}')
    rows += ["        return out", "", "    def label(self, name):", "        return name.title()", ""]
    return newline.join(rows)


SOURCE = long_class()
START = SOURCE.splitlines().index("    def summarize(self, rows):") + 1
END = SOURCE.splitlines().index("        return out") + 1
TARGET = Target(PATH, "Report.summarize", "method", START, END)
ASKED = Approach(REGION, TARGET, WHY)
MISSING = '        total_75 = sum(row.get("f75", 0) for row in rows)\n'
RIGHT = ("`f75` is never stored.\n```python\n<<<<<<< SEARCH\n" + MISSING + "=======\n" + MISSING
         + '        out["f75"] = total_75\n>>>>>>> REPLACE\n```\n')
TEST = "from report import Report\n\n\ndef test_f75():\n    assert Report().summarize([{'f75': 2}])['f75'] == 2\n"


def copy_of(tmp_path: Path, source: str = SOURCE) -> WorkingCopy:
    return WorkingCopy(tmp_path, {PATH: source.encode(), "test_report.py": TEST.encode()})


def applied(copy: WorkingCopy, plan: DebugPlan) -> str:
    text = copy.read(PATH) or ""
    for action in plan.actions:
        assert isinstance(action, EditAction) and action.path == PATH
        assert text.count(action.search) == 1
        text = text.replace(action.search, action.replace)
    return text


def refused(tmp_path: Path, reply: str) -> str:
    with pytest.raises(ReplyRejected) as caught:
        read_reply(ASKED, copy_of(tmp_path), reply)
    return str(caught.value)


def test_the_function_is_long_and_its_region_reply_is_small() -> None:
    assert END - START + 1 >= 300 and count_text("\n".join(SOURCE.splitlines()[START - 1 : END])) > LONG_TOKENS
    copy = WorkingCopy(Path("/nonexistent"), {PATH: SOURCE.encode()})
    assert REGION.reply_limit(ASKED, copy, 2048) == REGION_TOKENS < 2048 == FUNCTION.reply_limit(
        Approach(FUNCTION, TARGET, "the top-ranked function"), copy, 2048)  # the whole def would be cut at the cap
    assert REGION.reply_limit(ASKED, copy, 300) == 300  # never past llm.max_tokens


def test_a_block_inside_the_function_applies_there_and_nowhere_else(tmp_path: Path) -> None:
    copy = copy_of(tmp_path)
    text = applied(copy, read_reply(ASKED, copy, RIGHT))
    assert text == SOURCE.replace(MISSING, MISSING + '        out["f75"] = total_75\n')
    # a reply written at column 0 (the 1.5B model drops a method's indentation) takes the file's
    flush = RIGHT.replace("        ", "")
    assert applied(copy, read_reply(ASKED, copy, flush)) == text
    # several blocks apply one after another; unfenced blocks read the same
    two = ("<<<<<<< SEARCH\n" + MISSING + "=======\n" + MISSING + '        out["f75"] = total_75\n>>>>>>> REPLACE\n'
           "<<<<<<< SEARCH\n        return out\n=======\n        return dict(out)\n>>>>>>> REPLACE\n")
    both = applied(copy, read_reply(ASKED, copy, two))
    assert both == text.replace("        return out\n", "        return dict(out)\n")
    # unfenced blocks are asked again for a code block, and the two replies read together: the same block twice
    assert applied(copy, read_reply(ASKED, copy, two + "\n" + "```python\n" + two + "```\n")) == both


def test_a_reply_editing_outside_the_function_is_refused_with_its_reason(tmp_path: Path) -> None:
    outside = "<<<<<<< SEARCH\n        return name.title()\n=======\n        return name.upper()\n>>>>>>> REPLACE\n"
    reason = refused(tmp_path, RIGHT + outside)  # one block inside, one outside: the whole reply is refused
    line = SOURCE.splitlines().index("        return name.title()") + 1
    assert reason == (f"block 2 edits line {line} of report.py, outside `Report.summarize` (lines {START}-{END}): "
                      "only `Report.summarize` may change here")
    other = "test_report.py\n" + outside.replace("name.title()", "2")
    assert refused(tmp_path, other) == "block 1 names `test_report.py`: only `Report.summarize` in report.py may change here"
    imports = "<<<<<<< SEARCH\nimport math\n=======\nimport math\nimport os\n>>>>>>> REPLACE\n"
    assert "outside `Report.summarize`" in refused(tmp_path, imports)


def test_malformed_replies_are_refused_with_a_clear_reason(tmp_path: Path) -> None:
    assert refused(tmp_path, "The bug is that f75 is never stored.") == "the reply holds no SEARCH/REPLACE block"
    assert refused(tmp_path, "") == "the reply was empty"
    whole = "```python\ndef summarize(self, rows):\n    return {}\n```\n"
    assert "gives code but no SEARCH/REPLACE block" in refused(tmp_path, whole)
    cut = RIGHT.split("=======")[0]  # cut off at the reply's limit
    assert "not complete" in refused(tmp_path, cut) and "cut off" in refused(tmp_path, cut)
    missing = "<<<<<<< SEARCH\n        total_75 = total_74\n=======\n        total_75 = 0\n>>>>>>> REPLACE\n"
    assert refused(tmp_path, missing) == (
        f"block 1's SEARCH lines are not in `Report.summarize` (lines {START}-{END}); copy them exactly from it "
        "(not found: `total_75 = total_74`)")
    twice = "<<<<<<< SEARCH\n        out = {}\n=======\n        out = dict()\n>>>>>>> REPLACE\n"
    ambiguous = "<<<<<<< SEARCH\n            \n=======\n\n>>>>>>> REPLACE\n"
    assert "SEARCH is empty" in refused(tmp_path, ambiguous)
    repeated = SOURCE.replace("        out = {}\n", "        out = {}\n        out = {}\n")
    with pytest.raises(ReplyRejected, match=r"occur 2 times in `Report\.summarize`: copy more lines"):
        read_reply(Approach(REGION, Target(PATH, "Report.summarize", "method", START, END + 1), WHY),
                   copy_of(tmp_path, repeated), twice)
    broken = "<<<<<<< SEARCH\n        return out\n=======\n        return (out\n>>>>>>> REPLACE\n"
    assert refused(tmp_path, broken).startswith("with the reply's blocks the file does not parse")


def test_an_echo_is_unchanged_and_crlf_is_read_and_kept(tmp_path: Path) -> None:
    echo = "<<<<<<< SEARCH\n" + MISSING + "=======\n" + MISSING + ">>>>>>> REPLACE\n"
    with pytest.raises(ReplyUnchanged, match=r"change nothing in `Report\.summarize`"):
        read_reply(ASKED, copy_of(tmp_path), echo)
    copy = copy_of(tmp_path)
    want = applied(copy, read_reply(ASKED, copy, RIGHT))
    assert applied(copy, read_reply(ASKED, copy, RIGHT.replace("\n", "\r\n"))) == want  # a reply in CRLF
    crlf = copy_of(tmp_path, long_class("\r\n"))  # a file in CRLF keeps its line endings
    crlf.write(PATH, applied(crlf, read_reply(ASKED, crlf, RIGHT.replace("\n", "\r\n"))))
    data = crlf.files()[PATH]
    assert data == want.replace("\n", "\r\n").encode() and b"\n" not in data.replace(b"\r\n", b"")


def test_a_long_top_function_is_asked_for_its_region_in_place_of_its_whole_def(tmp_path: Path) -> None:
    copy = copy_of(tmp_path)
    top = Location(PATH, "Report.summarize", "method", START, END, 1.0, "frames")
    other = Location(PATH, "Report.label", "method", END + 2, END + 3, 0.5, "frames")

    def whys(**kwargs: object) -> list[tuple[str, str]]:
        return [(a.route, a.why) for a in ladder([top, other], TestReport(failed=1), copy, TestFiles(), **kwargs)]  # type: ignore[arg-type]

    region = [("region", WHY), ("region", WHY + ", sampled hotter")]
    # the method is most of its file: the anew rung's whole def too is asked as its lines (once per temperature)
    # then, the ladder above spent, the other ranked def no request asked (rung "next ranked")
    assert whys() == [*region, ("blocks", "changes in several places"), ("function", "the next-ranked functions together")]
    hot = [a for a in ladder([top], TestReport(failed=1), copy, TestFiles()) if a.route == "region"]
    assert [a.hotter for a in hot] == [0.0, 0.3]  # sampled as the function and hotter rungs' rounds were
    # turned off, the whole def is asked for as before; with only the whole-def rungs off, it still comes
    assert whys(off=["region"])[:3] == [("function", "the top-ranked function"),
                                       ("function", "the top-ranked function, sampled hotter"),
                                       ("function", "the top-ranked function, written anew from the tests")]
    assert whys(off=["function", "hotter", "anew"])[0] == ("region", WHY)
    # tests that may change: their rung comes right after the first code rung, the region's here
    test = Target("test_report.py", "test_f75", "function", 4, 5)
    writable = ladder([top], TestReport(failed=1), copy, TestFiles(writable=True), failing_tests=[test])
    assert [(a.route, a.test) for a in writable][:3] == [("region", False), ("function", True), ("region", False)]
    # a short top function: the function rung's, unchanged
    short = Location(PATH, "Report.label", "method", END + 2, END + 3, 1.0, "frames")
    assert [a.route for a in ladder([short], TestReport(failed=1), copy, TestFiles())][:2] == ["function", "function"]


def test_the_request_shows_the_function_and_the_lines_the_tracebacks_pass(tmp_path: Path) -> None:
    copy = copy_of(tmp_path)
    index = RepoIndex(workers=1)
    asyncio.run(index.update(copy.files()))
    line = SOURCE.splitlines().index('        total_10 = sum(row.get("f10", 0) for row in rows)') + 1
    report = TestReport(failed=1, failures=[TestFailure(
        test_id="test_report.py::test_f75", file="test_report.py", line=5, message="TypeError: unsupported operand",
        traceback=f"test_report.py:5: in test_f75\n    Report().summarize([...])\nreport.py:{line}: TypeError")])
    [_, user] = repair_messages(ASKED, copy, index, report, TestFiles(), template="python", workspace=tmp_path)
    text = str(user["content"])
    assert f"## The function to fix: `Report.summarize` in `report.py` (lines {START}-{END})" in text
    assert MISSING.rstrip("\n") in text and "return name.title()" not in text  # the function, not its file
    assert f'- line {line}: `total_10 = sum(row.get("f10", 0) for row in rows)`' in text
    assert "<<<<<<< SEARCH" in text and "do not write it again" in text
