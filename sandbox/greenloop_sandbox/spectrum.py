"""Which lines each test executed: the failing tests and their files' passing tests under coverage.

`run_spectrum` runs the template's `spectrum_command` (python: run_spectrum.py,
coverage.py with one dynamic context per test) through `Sandbox.exec` and
returns a `Spectrum`: per test, its outcome and the workspace lines it ran.
Every way it can fail (no command for the language, coverage missing in the
image, a run that timed out or printed nothing) is a `Spectrum` with a `note`
and no tests, never an exception: the ranking works without it.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from greenloop_sandbox.case_times import EarlyStop

if TYPE_CHECKING:
    from greenloop_sandbox.base import Sandbox

MARK = "SPECTRUM "
MAX_FOCUS = 20


class TestLines(BaseModel):
    """One test: its outcome and the lines it executed (workspace-relative path -> line numbers)."""

    __test__ = False

    test_id: str
    outcome: str = Field(description="'passed' | 'failed' | 'error' | 'skipped'")
    focus: bool = Field(default=False, description="One of the tests asked for (a failing test), not a file-mate.")
    lines: dict[str, list[int]] = Field(default_factory=dict)


class Spectrum(BaseModel):
    """Per-test executed lines; `note` says why there are none (or what was cut)."""

    tests: list[TestLines] = Field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def failing(self) -> list[TestLines]:
        """The focus tests that failed (a file-mate failing for its own reasons, e.g. no network, is left out)."""
        focused = any(t.focus for t in self.tests)
        return [t for t in self.tests if t.outcome in ("failed", "error") and (t.focus or not focused)]

    @property
    def passing(self) -> list[TestLines]:
        return [t for t in self.tests if t.outcome == "passed"]


async def run_spectrum(
    sandbox: Sandbox, focus: list[str], *, max_tests: int = 200, seconds: float = 60.0, support: str | None = None
) -> Spectrum:
    """Run `focus` (failing test ids, the first `MAX_FOCUS`) and up to `max_tests` tests of their files
    under coverage.

    Passing tests stop being added after `seconds`; each test ends at the sandbox's per-test timeout.
    """
    if not sandbox.template.spectrum_command:
        return Spectrum(note=f"no coverage runner for {sandbox.template.name}")
    if not focus:
        return Spectrum(note="no failing test")
    focus = focus[:MAX_FOCUS]  # the failing tests always run: many of them, each up to its timeout, is a long pass
    started = time.monotonic()
    # the tests' own limits, as in a test run; once a focus test that hung before hangs again, the others
    # that hung before are not run (they would each wait out their limit in the same loop, case_times.py)
    again = EarlyStop(hung=tuple(t for t in focus if t in sandbox.case_times.hung), report=False)
    case_timeout, env = await sandbox.case_limits(focus, again)
    command = sandbox.template.spectrum_argv(
        focus, max_tests=max_tests, seconds=seconds, case_timeout=case_timeout,
        support=support or sandbox.support_dir(),
    )
    # the whole run: the passing tests' time, then the focus tests and one more test at their timeout
    limit = seconds + (len(focus) + 1) * max(case_timeout, 10) + 60
    res = await sandbox.exec(command, timeout=limit, env=env)
    spectrum = parse_spectrum(res.stdout)
    spectrum.seconds = round(time.monotonic() - started, 3)
    if spectrum.note == "no spectrum in the output":
        why = "timed out" if res.timed_out else f"exit {res.exit_code}"
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
        spectrum.note = f"the coverage run printed no spectrum ({why}) {tail[0][:300]}".strip()
    return spectrum


def parse_spectrum(output: str) -> Spectrum:
    """The runner's `SPECTRUM <base64 zlib JSON>` line -> Spectrum (a note when it is missing or broken)."""
    line = next((x for x in reversed(output.splitlines()) if x.startswith(MARK)), None)
    if line is None:
        return Spectrum(note="no spectrum in the output")
    try:
        data = json.loads(zlib.decompress(base64.b64decode(line[len(MARK):])))
        tests = [
            TestLines(test_id=t["id"], outcome=t["outcome"], focus=bool(t.get("focus", False)),
                      lines={p: _expand(r) for p, r in t.get("lines", {}).items()})
            for t in data.get("tests", [])
        ]
        return Spectrum(tests=tests, seconds=float(data.get("seconds", 0.0)), note=str(data.get("note", "")))
    except (ValueError, KeyError, TypeError, zlib.error) as exc:
        return Spectrum(note=f"the coverage run's output is unreadable ({exc})")


def _expand(ranges: str) -> list[int]:
    """"1-3,7" -> [1, 2, 3, 7]."""
    out: list[int] = []
    for part in filter(None, ranges.split(",")):
        start, _, end = part.partition("-")
        out.extend(range(int(start), int(end or start) + 1))
    return out
