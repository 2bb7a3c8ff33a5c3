"""The stood-by skip: a fresh ladder does not ask first about a function the model gave back unchanged.

A round whose code candidates came back unchanged (at least half of them, each twice, none better) means
the model stands by that code: the ledger keeps the function (`keeps`), and when the ladder starts again
from the top (the first, or after a move) its approaches are passed over while a later one remains
(`passes_over`). Which forms stand by is theirs to say (`Form.stands_by`).
"""

from __future__ import annotations

from typing import Literal

from greenloop.agent.repair.approach import Approach, stood_by_key
from greenloop.agent.repair.candidate_round import RoundResult


class StoodBy:
    name = ""
    when: Literal["a fresh ladder"] = "a fresh ladder"

    def passes_over(self, approach: Approach, kept: frozenset[str]) -> bool:
        return approach.form.stands_by and not approach.test and stood_by_key(approach.target) in kept

    def keeps(self, result: RoundResult) -> str | None:
        """The function the model stood by in this round: at least half of a code round's candidates gave it
        back unchanged (twice each), and none was better."""
        approach, tried = result.approach, result.tried
        if not approach.form.stands_by or approach.test or result.moved or not tried:
            return None
        return stood_by_key(approach.target) if 2 * sum(t.unchanged for t in tried) >= len(tried) else None


STEP = StoodBy()
