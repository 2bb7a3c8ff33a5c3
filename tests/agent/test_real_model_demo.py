"""The README demo with the real embedded model (opt-in: `pytest -m real_llm`): the calculator goes green.

The embedded default model, a pinned seed, the candidate rounds as they ship, the real
sandbox: the demo's one-line bug must be fixed, and the change set must not touch the test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.settings import load_settings
from tests.agent.conftest import collect, tree_bytes

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(900)]
DEMO = Path(__file__).resolve().parents[2] / "examples" / "calculator"


async def test_the_demo_goes_green_with_the_embedded_model_and_a_pinned_seed(tmp_path: Path) -> None:
    ws = tmp_path / "calculator"
    shutil.copytree(DEMO, ws)
    before = tree_bytes(ws)
    settings = load_settings(ws, {"llm": {"seed": 7}, "runs": {"store": str(tmp_path / "runs.sqlite3")}})
    _, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", f"{done.summary} {done.evidence}"
    assert [c.path for c in done.changes.files] == ["calculator.py"]
    assert "(len(values) + 1)" not in (done.changes.files[0].after or "")
    assert tree_bytes(ws) == before  # no --apply: untouched
