"""Records a run in the run store as it goes; a store that fails never stops the run."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from greenloop.agent.events import Done, Event, RunStarted
from greenloop.errors import GreenloopError
from greenloop.settings import Settings

log = logging.getLogger(__name__)


class RunRecorder:
    """Writes events, model calls and the outcome of one run; degrades to a warning on store errors."""

    def __init__(self, settings: Settings, workspace: Path | None) -> None:
        self.problem: str | None = None
        self._store: Any = None
        self._run_id = ""
        self._finished = False
        self._last_budget: dict[str, Any] = {}
        if not settings.runs.enabled:
            return
        try:
            from greenloop.run_records import RunStore, store_path

            self._store = RunStore.open(store_path(settings, workspace))
        except GreenloopError as exc:
            self.problem = f"could not record this run: {exc}"

    def event(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._run_id = event.run_id
            self._guard(
                lambda s: s.start_run(
                    event.run_id,
                    mode=event.mode,
                    workspace=event.workspace,
                    config=event.config,
                    seed=event.seed,
                    model=str(event.config.get("llm", {}).get("model", "")),
                    started_at=time.time(),  # the run starts now (event.at counts seconds from here)
                )
            )
            return
        if event.kind == "diagnosis_delta":
            return
        if event.kind == "budget":
            self._last_budget = event.model_dump()
        self._guard(lambda s: s.add_event(self._run_id, event.model_dump(mode="json")))
        if isinstance(event, Done):
            self._finished = True
            self._guard(
                lambda s: s.finish_run(
                    self._run_id,
                    outcome=event.outcome,
                    iterations=event.iterations,
                    prompt_tokens=event.prompt_tokens,
                    completion_tokens=event.completion_tokens,
                    cost=event.cost,
                    seconds=event.seconds,
                    summary=event.summary,
                )
            )

    def call(self, record: Any) -> None:
        """Sink for the LLM client's call records."""
        if self._run_id:
            self._guard(lambda s: s.add_call(self._run_id, record.model_dump(mode="json")))

    def close(self, outcome_if_unfinished: str = "cancelled") -> None:
        if self._store is None:
            return
        if self._run_id and not self._finished:
            self._guard(
                lambda s: s.finish_run(
                    self._run_id,
                    outcome=outcome_if_unfinished,
                    iterations=int(self._last_budget.get("iteration", 0)),
                    prompt_tokens=int(self._last_budget.get("prompt_tokens", 0)),
                    completion_tokens=int(self._last_budget.get("completion_tokens", 0)),
                    cost=float(self._last_budget.get("cost", 0.0)),
                    seconds=float(self._last_budget.get("seconds", 0.0)),
                    summary=f"run ended: {outcome_if_unfinished}",
                )
            )
        try:
            self._store.close()
        except Exception as exc:  # closing must never mask the run's own outcome
            log.warning("run store close failed: %s", exc)
        self._store = None

    def _guard(self, write: Any) -> None:
        if self._store is None:
            return
        try:
            write(self._store)
        except Exception as exc:  # recording is best effort by design: the run matters more
            self.problem = f"could not record this run: {exc}"
            log.warning("%s", self.problem)
            self._store = None
