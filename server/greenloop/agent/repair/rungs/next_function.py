"""Rung "next function": the next-ranked function, asked as the top one is (function.py), when that brought nothing."""

from __future__ import annotations

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.rung import LadderState, Rung, target_of
from greenloop.agent.repair.rungs.function import FUNCTION


class NextFunction(Rung):
    name = "next function"

    def applies(self, state: LadderState) -> list[Approach]:
        return [Approach(FUNCTION, target_of(loc), "the next-ranked function") for loc in state.functions[1:2]]


RUNG = NextFunction()
