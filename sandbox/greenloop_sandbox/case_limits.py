"""One sandbox's per-test limits: whether its per-test timeout works there, and the limits file its runner reads.

A backend owns one `CaseLimits` and hands it what it cannot know itself: how to run a probe command and
where to write the limits file (`put`). What each test took is in `times` (case_times.CaseTimes).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from greenloop_sandbox.case_times import CaseTimes, EarlyStop
from greenloop_sandbox.templates import EnvTemplate

log = logging.getLogger(__name__)
CASES_ENV = "GREENLOOP_CASES"  # names the JSON file of per-test limits the python runner reads


class CaseLimits:
    """The per-test timeout of one sandbox's runs, learnt from every run (`times`)."""

    def __init__(self, factor: float, *, probe: Callable[[str], Awaitable[bool]],
                 put: Callable[[bytes], Awaitable[str]], note: Callable[[str], None]) -> None:
        self.times = CaseTimes(factor)  # what its tests took when they passed (the adaptive per-test timeout)
        self._probe = probe  # runs a command in the sandbox: whether it succeeded
        self._put = put  # writes the limits file where the sandbox's commands read it; its path there
        self._note = note  # tells the sandbox's user what is missing
        self._works: bool | None = None  # the template's per-test timeout works here (None: not probed yet)
        self._written: tuple[bytes, str] | None = None  # the limits file last written, and where

    def forget_file(self) -> None:
        """A new container or folder: it has no limits file yet."""
        self._written = None

    async def for_run(self, template: EnvTemplate, cap: float, test_ids: list[str] | None,
                      stop: EarlyStop | None = None) -> tuple[float, dict[str, str]]:
        """The per-test timeout argument for a run of `test_ids` (`cap`: the setting), and the environment that
        carries each test's own limit and the early stop to a runner that reads them (`case_limits` templates)."""
        cap = await self.per_test_timeout(template, cap)
        if not template.case_limits:
            return (self.times.run_limit(test_ids, cap) if cap else 0), {}
        data = self.times.payload(test_ids, cap, stop)
        if not cap:
            data.update(factor=0, stop_on_hang=[])
        text = json.dumps(data, sort_keys=True).encode()
        if self._written is None or self._written[0] != text:  # a round's small edits send the same file: once
            self._written = (text, await self._put(text))
        return cap, {CASES_ENV: self._written[1]}

    async def per_test_timeout(self, template: EnvTemplate, seconds: float) -> float:
        """`seconds` where the template's per-test timeout works in this sandbox, else 0 (probed once).

        The probe is the template's `case_timeout_probe`: the local backend's host may lack
        pytest-timeout, where an unknown `--timeout` would fail every run, and node has
        `--test-timeout` from 20.11 on only. Without it a note says so; hung tests then run
        until the whole run's timeout.
        """
        if seconds <= 0 or not template.case_timeout:
            return 0
        if self._works is None:
            probe = template.case_timeout_probe
            self._works = not probe or await self._probe(probe)
            if not self._works:
                why = (f"no per-test timeout for {template.name} here (`{probe}` failed): a hung test "
                       "runs until the whole run's timeout")
                self._note(why)
                log.warning("sandbox: %s", why)
        return seconds if self._works else 0

