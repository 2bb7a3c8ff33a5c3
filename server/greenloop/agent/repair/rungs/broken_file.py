"""Rung "broken file": a source file that does not load (`SyntaxError`, `ImportError`, `NameError`, ...), repaired whole."""

from __future__ import annotations

import re

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.file_form import whole_file
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.places import known_path
from greenloop.retrieval import language_of

_BROKEN = ("SyntaxError", "IndentationError", "ImportError", "NameError: name", "TabError")


class BrokenFile(Rung):
    name = "broken file"

    def applies(self, state: LadderState) -> list[Approach]:
        broken = _broken_file(state)
        return [whole_file(broken, "the code does not load")] if broken else []


def _broken_file(state: LadderState) -> str:
    """A source file named in a failure that says the code does not load (syntax, import, name errors)."""
    for failure in state.report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        if not any(word in text for word in _BROKEN):
            continue
        for path in reversed(re.findall(r"([\w./-]+\.\w+)", text)):
            known = known_path(state.copy.paths(), path)
            if known and not state.tests.is_test(known) and language_of(known):
                return known
    return ""


RUNG = BrokenFile()
