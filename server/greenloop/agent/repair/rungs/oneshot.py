"""Rung "oneshot" (`loop.strategy = "oneshot"`, the baseline's only rung): the whole top file, once, with a bare prompt."""

from __future__ import annotations

from dataclasses import replace

from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.file_form import FileForm, whole_file
from greenloop.agent.repair.ladder_rung import LadderState, Rung


class Oneshot(Rung):
    name = "oneshot"

    def applies(self, state: LadderState) -> list[Approach]:
        if not state.sources:
            return []
        return [replace(whole_file(state.sources[0].path, "the whole file, once (baseline)"), form=FileForm(bare=True))]


RUNG = Oneshot()
