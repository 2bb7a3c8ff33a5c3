"""A bug in a 300-line function goes green through a region request: the model is asked for the lines to change,
with a small reply limit, and a reply that edits outside the function is refused and loses nothing
(rungs/region.py; real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested
from greenloop.agent.repair.rungs.region import REGION_TOKENS
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

FIELDS = 149


def summarize() -> str:
    """A 300-line function: field 75's total is computed and never stored (no one-edit change stores it)."""
    rows = ["def summarize(rows):", '    """The totals of a report, field by field."""', "    out = {}"]
    for n in range(FIELDS):
        rows.append(f'    total_{n} = sum(row.get("f{n}", 0) for row in rows)')
        if n != 75:
            rows.append(f'    out["f{n}"] = total_{n}')
    return "\n".join([*rows, "    return out", "", "", "def label(name):", "    return name.title()", ""])


SOURCE = summarize()
TEST = ("from report import summarize\n\n\ndef test_field_75():\n"
        "    assert summarize([{'f75': 2, 'f74': 9}, {'f75': 3}])['f75'] == 5\n\n\n"
        "def test_field_74():\n    assert summarize([{'f74': 9}])['f74'] == 9\n")
MISSING = '    total_75 = sum(row.get("f75", 0) for row in rows)\n'
RIGHT = ("`f75` is never stored.\n```python\n<<<<<<< SEARCH\n" + MISSING + "=======\n" + MISSING
         + '    out["f75"] = total_75\n>>>>>>> REPLACE\n```\n')
OUTSIDE = ("The label is wrong too.\n```python\n<<<<<<< SEARCH\n" + MISSING + "=======\n" + MISSING
           + '    out["f75"] = total_75\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n    return name.title()\n=======\n'
           "    return name.upper()\n>>>>>>> REPLACE\n```\n")


async def test_a_region_request_on_a_300_line_function_applies_and_goes_green(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"report.py": SOURCE, "tests/test_report.py": TEST})
    assert SOURCE.splitlines().index("    return out") + 1 >= 300
    region = scripted_llm.script(OUTSIDE, RIGHT, step="repair_region", repeat=False)
    scripted_llm.script("```python\ndef summarize(rows):\n    return {}\n```\n")  # any other request: no fix
    settings = make_settings(ws, loop={"candidates": 2, "max_iterations": 2})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert region.hits == 2 and scripted_llm.requests_for("repair_function") == []  # the whole def never asked
    asked = scripted_llm.requests_for("repair_region")
    assert [r.body["max_tokens"] for r in asked] == [REGION_TOKENS, REGION_TOKENS]
    prompt = str(asked[0].messages[-1]["content"])
    assert "## The function to fix: `summarize` in `report.py` (lines 1-" in prompt and "do not write it again" in prompt
    tested = [e for e in events if isinstance(e, CandidateTested) and e.route == "region"]
    assert [e.status for e in tested] == ["rejected", "tested"]
    line = SOURCE.splitlines().index("    return name.title()") + 1
    assert tested[0].reason == (f"block 2 edits line {line} of report.py, outside `summarize` (lines 1-{line - 4}): "
                                "only `summarize` may change here")
    # the kept change is the right one alone: the refused reply's block inside the function did not come along
    diff = done.changes.diff
    changed = [row for row in diff.splitlines() if row[:1] in "+-" and not row.startswith(("+++", "---"))]
    assert changed == ['+    out["f75"] = total_75']
    assert (ws / "report.py").read_text() == SOURCE  # nothing written before the change is accepted
