"""Rung "next ranked": the defs ranked past the several rung's groups that no request showed, a group at a time.

Every rung above asks about the top-ranked function, its file or the several rung's groups (the top
function with its callees and the next shown functions; the failing test's own calls). A bug in a def
ranked 4th to 9th is then never shown: a value written in one def and read three frames down, a CLI
test whose fix is in a function its command calls. The run stops "stuck" with rounds left (the oracle's
loss table: "buggy def never shown"). This rung asks those defs, in the several rung's relevance order
and form (a group of at most its MAX_DEFS within its MAX_LINES; one def alone too), NEXT_GROUPS groups
at most, each def once. It comes after every other rung, so it costs rounds only where the ladder
above is spent.
"""

from __future__ import annotations

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.rungs.several import SEVERAL, asked_groups, group, group_order

NEXT_GROUPS = 2


class NextRanked(Rung):
    name = "next ranked"

    def applies(self, state: LadderState) -> list[Approach]:
        first, path = asked_groups(state)
        order = group_order(state)
        seen = {(t.path, t.start_line) for t in [*first, *path]}
        if order:
            seen.add((order[0].path, order[0].start_line))  # the one-def rungs asked the top function
        out: list[Approach] = []
        while len(out) < NEXT_GROUPS:
            found = group([loc for loc in order if (loc.path, loc.start_line) not in seen])
            if not found:
                break
            seen |= {(t.path, t.start_line) for t in found}
            out.append(Approach(SEVERAL, found[0], "the next-ranked functions together", also=tuple(found[1:])))
        return out


RUNG = NextRanked()
