"""Rung "hotter": the top-ranked function again, every candidate sampled 0.3 hotter (the greedy one too)."""

from __future__ import annotations

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.agent.repair.rungs.function import FUNCTION

HOTTER = 0.3


class Hotter(Rung):
    name = "hotter"

    def applies(self, state: LadderState) -> list[Approach]:
        return [Approach(FUNCTION, target_of(loc), "the top-ranked function, sampled hotter", hotter=HOTTER)
                for loc in state.functions[:1]]


RUNG = Hotter()
