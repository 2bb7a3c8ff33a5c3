"""Packing code under a token budget; token counting."""

from __future__ import annotations

import random

from greenloop.retrieval import RepoIndex, count_tokens, locate, pack_code
from greenloop.tokens import estimate_tokens, tokenizer_name
from tests.retrieval.conftest import STDLIB, HumanEvalFixRepo


async def test_context_has_the_code_the_test_and_an_outline(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    failure = next(f for f in hef_repo.report().failures if f.file == "tests/test_t000.py")
    found = await locate(hef_index, [failure], top_k=8)
    context = pack_code(hef_index, found, budget_tokens=1500, failures=[failure])
    assert context.tokens == count_tokens(context.text) <= 1500
    text = context.text
    assert text.startswith("## Failing tests\n- tests/test_t000.py::test_has_close_elements: assert True == False")
    assert "### src/hef/t000.py:4-12 has_close_elements (function)\n 4| def has_close_elements(" in text
    assert " 8|                 distance = elem - elem2\n" in text  # the buggy line, numbered as in the file
    assert "### tests/test_t000.py:" in text  # the failing test's own code
    assert "## Outline of related files (signatures only)" in text
    assert context.locations[0].symbol == "has_close_elements"
    # for a prompt that shows the failures itself: the same code, without the messages
    code_only = pack_code(hef_index, found, budget_tokens=1500, failures=[failure], failure_text=False)
    assert "## Failing tests" not in code_only.text and code_only.text.startswith("## Code")
    assert "### tests/test_t000.py:" in code_only.text and code_only.tokens < context.tokens


async def test_budget_is_never_exceeded(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    failures = hef_repo.report().failures
    found = await locate(hef_index, failures[:20], top_k=40)
    for budget in (1, 50, 200, 800, 3000, 20000):
        context = pack_code(hef_index, found, budget_tokens=budget, failures=failures[:20])
        assert context.tokens <= budget
        assert context.tokens == count_tokens(context.text)
    small = pack_code(hef_index, found, budget_tokens=200)
    large = pack_code(hef_index, found, budget_tokens=20000)
    assert len(small.locations) < len(large.locations) and large.text.count("### ") >= 20


async def test_whole_files_cost_more_than_the_context(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    failure = hef_repo.report().failures[10]
    found = await locate(hef_index, [failure], top_k=5)
    context = pack_code(hef_index, found, budget_tokens=100_000, failures=[failure])
    whole_repo = sum(count_tokens(d.decode()) for d in hef_repo.files.values())
    assert context.tokens < whole_repo / 20


def test_token_counts_are_deterministic_and_the_estimate_is_close() -> None:
    assert tokenizer_name() in ("cl100k_base", "estimate")
    text = (STDLIB / "json" / "decoder.py").read_text()
    assert count_tokens(text) == count_tokens(text) > 1000
    assert count_tokens("") == 0 and estimate_tokens("") == 0
    if tokenizer_name() == "cl100k_base":
        files = sorted(STDLIB.glob("*.py"))
        ratios = sorted(estimate_tokens(t) / count_tokens(t) for t in (p.read_text() for p in random.Random(3).sample(files, 40)))
        assert 0.85 < ratios[len(ratios) // 2] < 1.15


async def test_a_definition_too_long_for_the_budget_shows_as_an_excerpt() -> None:
    body = "".join(f"    total += value * {n}  # step {n} of the long computation\n" for n in range(120))
    source = (
        "def long_report(values):\n"
        "    def fmt(value):\n"
        "        text = str(value)\n"
        "        return text.rjust(8)\n"
        "    total = 0\n"
        + body
        + "    return fmt(total)\n"
    )
    index = RepoIndex()
    await index.update({"pkg/report.py": source.encode()})
    [location] = [loc for loc in await locate(index, 'File "pkg/report.py", line 100, in long_report\n')
                  if loc.symbol == "long_report"]
    context = pack_code(index, [location], budget_tokens=600)
    assert context.tokens <= 600 and context.locations == [location] and context.excerpts == [location]
    assert "### pkg/report.py:1-126 long_report (function), excerpt" in context.text
    assert "2|     def fmt(value):\n   | … lines 3-4 not shown (a nested definition)" in context.text
    assert "lines not shown" in context.text and "126|     return fmt(total)" in context.text
    whole = pack_code(index, [location], budget_tokens=5000)
    assert whole.excerpts == [] and "step 119 of" in whole.text


async def test_a_long_first_location_leaves_room_for_the_next_ranked_one() -> None:
    # the first fits the budget only by taking all of it: it is shown as an excerpt, so the second gets in
    body = "".join(f"    total += value * {n}  # step {n} of the long computation\n" for n in range(60))
    source = "def long_report(values):\n    total = 0\n" + body + "    return total\n\n\ndef short(x):\n    return x\n"
    index = RepoIndex()
    await index.update({"pkg/report.py": source.encode()})
    by_symbol = {loc.symbol: loc for loc in await locate(index, 'File "pkg/report.py", line 30, in long_report\n')}
    first, second = by_symbol["long_report"], by_symbol["short"]
    alone = pack_code(index, [first], budget_tokens=1400)
    assert alone.excerpts == [] and 1100 < alone.tokens <= 1400  # alone, it is shown whole
    both = pack_code(index, [first, second], budget_tokens=1400)
    assert both.locations == [first, second] and both.excerpts == [first]
    assert "def short(x):" in both.text
