"""A rung written for a test, as one module like those in `agent/repair/rungs/`: `add` made to add, asked of no model."""

from __future__ import annotations

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.rungs.blocks import blocks_on

REPLY = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
WHY = "a change known to the test's own rung"


class KnownFix(Rung):
    name = "known fix"

    def applies(self, state: LadderState) -> list[Approach]:
        if state.copy.read("calc.py") is None:
            return []
        return [blocks_on("calc.py", WHY, state, given=REPLY)]


RUNG = KnownFix()
