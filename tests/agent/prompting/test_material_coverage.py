"""The code a fix-loop prompt shows, with `retrieval.coverage`: one coverage pass per run, through the port it is given."""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.prompting.material import PromptCodeBuilder
from greenloop_sandbox import Spectrum, TestFailure, TestLines
from tests.support import shop


async def test_the_pass_runs_once_and_its_signal_reaches_the_locations(tmp_path: Path) -> None:
    asked: list[list[str]] = []
    cart = shop.CART.splitlines()
    body = [n for n, line in enumerate(cart, 1) if "rate = 0.15" in line or "return gross - gross" in line]

    async def coverage(ids: list[str]) -> Spectrum:
        asked.append(ids)
        return Spectrum(tests=[
            TestLines(test_id=shop.FAILING, outcome="failed", focus=True, lines={"shop/cart.py": body}),
            TestLines(test_id="tests/test_cart.py::test_total_adds_the_lines", outcome="passed"),
        ])

    builder = PromptCodeBuilder(use_retrieval=True, budget_tokens=3000, top_k=8, coverage=coverage)
    copy = WorkingCopy(tmp_path, shop.files())
    failure = TestFailure(test_id=shop.FAILING, file="tests/test_cart.py", line=31, message="assert 2.0 == 18.0")
    for _ in range(2):  # a second round reuses the pass
        code = await builder.build(copy, [failure])
        buggy = next(loc for loc in code.locations if loc.symbol == shop.BUGGY)
        assert any(s.name == "executed" and s.value == 1.0 for s in buggy.signals)
    assert asked == [[shop.FAILING]]
    plain = await PromptCodeBuilder(use_retrieval=True, budget_tokens=3000, top_k=8).build(copy, [failure])
    assert all(s.name != "executed" for loc in plain.locations for s in loc.signals)
