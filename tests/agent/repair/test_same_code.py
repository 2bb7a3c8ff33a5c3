"""A reply that changes only comments, spacing or quote style changes nothing a test can see: it is rejected as
unchanged (or as a repeat of a change tested already) and costs no sandbox run; a docstring change is a change.

Real tree-sitter and the real splice code; the rounds run `fix` with the real Docker sandbox and the scripted
model over real HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import CandidateTested
from greenloop.agent.repair.approach import Approach, ReplyUnchanged, read_reply
from greenloop.agent.repair.region_edits import region_edits
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.splice import Target, Unchanged, splice
from tests.agent.conftest import collect
from tests.agent.orchestration.test_candidate_strategy import RIGHT, WRONG, candidates

SOURCE = (
    "class Cart:\n"
    "    def total(self, items):\n"
    "        \"\"\"The sum of the items' prices.\"\"\"\n"
    "        result = 0\n"
    "        for item in items:\n"
    "            result += item['price']\n"
    "        return result\n"
)
# the def given back with a comment, other blank lines, other quotes, other spacing and a line joined
REFORMATTED = (
    "Here is the fixed function:\n```python\n"
    "def total(self, items):\n"
    "    '''The sum of the items' prices.'''\n"
    "    # add up each price\n"
    "    result=0\n\n"
    "    for item in items: result += item[\"price\"]  # the price\n"
    "    return (result)\n"
    "```\nThe bug was the missing check.\n"
)
NEW_DOCSTRING = REFORMATTED.replace("The sum of the items' prices.", "The sum of the prices of the items.")
APPROACH = Approach(FUNCTION, Target("shop.py", "Cart.total", "method", 2, 7), "the top-ranked function")


@pytest.fixture
def copy(tmp_path: Path) -> WorkingCopy:
    return WorkingCopy(tmp_path, {"shop.py": SOURCE.encode()})


def test_a_reply_that_only_adds_a_comment_and_reformats_is_unchanged_and_stopped_as_it_streams(
    copy: WorkingCopy,
) -> None:
    with pytest.raises(ReplyUnchanged, match="is the same as the one in the file: it changes nothing"):
        read_reply(APPROACH, copy, REFORMATTED)
    closes = REFORMATTED.index("```\n", 10) + 4
    assert FUNCTION.known_echo(APPROACH, copy, REFORMATTED[:closes])  # the early stop reads it the same way
    assert not FUNCTION.known_echo(APPROACH, copy, REFORMATTED[: closes - 1])


def test_a_docstring_change_is_a_change(copy: WorkingCopy) -> None:
    plan = read_reply(APPROACH, copy, NEW_DOCSTRING)
    (edit,) = plan.actions
    assert '"""The sum of the items\' prices."""' in edit.search  # type: ignore[union-attr]
    assert "The sum of the prices of the items." in edit.replace  # type: ignore[union-attr]
    assert not FUNCTION.known_echo(APPROACH, copy, NEW_DOCSTRING)


def test_code_that_does_not_parse_as_python_is_compared_as_text() -> None:
    js = "function add(a, b) {\n  return a - b;\n}\n"
    target = Target("calc.js", "add", "function", 1, 3)
    with pytest.raises(Unchanged):
        splice(js, target, f"```js\n{js}```")
    commented = "```js\nfunction add(a, b) {\n  // the sum\n  return a - b;\n}\n```"
    assert splice(js, target, commented)  # not python: a comment is a change of the text
    # a python region whose lines do not parse alone (a string's line at the margin) is compared as text too
    source = 'class C:\n    def f(self):\n        x = """\nmargin\n"""\n        return x\n'
    region = Target("m.py", "C.f", "method", 2, 6)
    reply = "<<<<<<< SEARCH\n        return x\n=======\n        return (x)\n>>>>>>> REPLACE\n"
    assert region_edits(source, region, reply)


def test_the_fingerprint_of_a_change_is_its_syntax_trees(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shop.py": SOURCE.encode(), "notes.txt": b"a\n"})
    start = copy.code_fingerprint()
    reformatted, changed, again = copy.fork(), copy.fork(), copy.fork()
    reformatted.write("shop.py", SOURCE.replace("result = 0", "result = 0  # none yet").replace("'price'", '"price"'))
    changed.write("shop.py", SOURCE.replace("result = 0", "result = 1"))
    again.write("shop.py", SOURCE.replace("result = 0", "result=1  # one"))
    assert reformatted.code_fingerprint() == start and reformatted.fingerprint() != copy.fingerprint()
    assert changed.code_fingerprint() != start and again.code_fingerprint() == changed.code_fingerprint()
    text = copy.fork()
    text.write("notes.txt", "a \n")  # not python: its bytes count
    assert text.code_fingerprint() != start


ECHO_WITH_COMMENT = "It should add.\n```python\ndef add(a, b):\n    # subtract b  \n\n    return (a-b)\n```\n"
DOCSTRING_ONLY = 'Documented.\n```python\ndef add(a, b):\n    """Add two numbers."""\n    return a - b\n```\n'


@pytest.mark.docker
async def test_in_a_round_a_reformatted_echo_never_reaches_the_sandbox_and_a_docstring_change_does(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(ECHO_WITH_COMMENT, DOCSTRING_ONLY, RIGHT, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates({"candidates": 3}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    tested = [e for e in events if isinstance(e, CandidateTested) and e.route == "function"]
    assert [(e.index, e.status, e.green) for e in tested] == [
        (1, "rejected", False), (2, "tested", False), (3, "tested", True)]
    assert "is the same as the one in the file: it changes nothing" in tested[0].reason
    assert tested[0].scope == "" and tested[1].scope != ""  # the echo ran no test; the docstring change did
    assert '+    """Add two numbers."""' in tested[1].diff


@pytest.mark.docker
async def test_a_reformatted_repeat_of_a_tested_candidate_is_not_tested_again(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    repeat = "Multiply them.\n```python\ndef add(a,b):\n    # the product\n    return (a*b)\n```\n"
    scripted_llm.script(WRONG, repeat, RIGHT, step="repair_function", repeat=False)
    settings = make_settings(calc_project, loop=candidates({"candidates": 2}))
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green", done.summary + done.evidence
    tested = [e for e in events if isinstance(e, CandidateTested) and e.route == "function"]
    assert [(e.index, e.status, e.green) for e in tested] == [(1, "tested", False), (2, "tested", True)]
    assert "+    return a + b" in tested[1].diff  # candidate 2 is the reply to the question asked again
    requests = scripted_llm.requests_for("repair_function")
    assert len(requests) == 3 and "was tested already" in requests[2].messages[-1]["content"]
