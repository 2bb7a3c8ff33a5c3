"""One realbugs cell: unpack the case, install its requirements, check it is red, run the fix loop, verify.

The cell opens the run's ports itself (model client + Docker python sandbox, as the loop would), so
that the case's requirements are installed before the loop's first test run, through the sandbox's
own install (resolved on the host, installed offline in a cached image layer). That install's time
is `setup_seconds`, which the bench leaves out of the cell's wall time: the first case of a
requirement set builds the layer, and which config's cell that is depends on the order of cells.
Outcomes besides the loop's own:
- `skipped`: the requirements could not be installed; the reason is kept.
- `not_reproduced`: the named tests do not fail in the sandbox, fail only because a module is
  missing, or fail without the exception the case's real output names; never counted as fixed.
- `tests_edited` / `unverified`: the loop said green, but its change set touches a test file, or
  the named tests do not pass when its change set is synced again and rerun.
A verified green gets `extra["verdict"]`: the fix against the developers' (`fix.patch`), correctness.py.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from greenloop.agent import ChangeSet, FixRequest, Ports, WorkingCopy, fix, open_ports
from greenloop.agent.ports import SandboxPort
from greenloop.bench.cell_outcome import consume
from greenloop.bench.correctness import VARIANTS, Verdict, after, changed, judge, patched, texts
from greenloop.bench.realbugs import CASE_TIMEOUT, expected_error, recorded_output, unpack
from greenloop.bench.tasks import Task
from greenloop.retrieval.index import is_test_path
from greenloop.settings import Settings
from greenloop_sandbox import TestReport


async def drive_case(task: Task, tmp: Path, settings: Settings, seen: dict[str, Any]) -> dict[str, Any]:
    """The Done of the case's fix run as a dict (see the module docstring for the extra outcomes)."""
    extra = task.extra
    tests: list[str] = list(extra["tests"])
    archive = Path(extra["archive"])
    workspace = unpack(archive, tmp / "ws", task.id)
    timeout = max(settings.sandbox.test_case_timeout, CASE_TIMEOUT)
    settings = settings.model_copy(update={"sandbox": settings.sandbox.model_copy(update={"test_case_timeout": timeout})})
    copy = WorkingCopy.from_workspace(workspace)
    calls = _CallSink(settings)
    try:
        async with open_ports(settings, task.template, sink=calls.add, label=f"bench-{task.id}") as ports:
            begun = time.monotonic()
            installed = await ports.sandbox.install(list(extra["requirements"]))
            setup = time.monotonic() - begun  # a new layer is built once per requirement set, then cached
            if not getattr(installed, "ok", False):
                why = getattr(installed, "reason", "") or getattr(installed, "stderr", "")
                return _not_run(task, "skipped", f"requirements not installed offline: {why.strip()[-400:]}")
            await ports.sandbox.sync(copy.files())
            red = await ports.sandbox.run_tests(tests, timeout=settings.sandbox.test_timeout)
            why_not = not_red(red, ports.sandbox.template.language.missing_module, expected_error(archive),
                              recorded_output(archive))
            if why_not:
                return _not_run(task, "not_reproduced", why_not)
            events = fix(FixRequest(workspace=workspace, test_ids=tests), settings, ports=ports)
            done = await consume(events, seen, on_event=calls.started)
            done["extra"].update(project=str(extra["project"]), setup_seconds=round(setup, 3), red=red.summary())
            await _check(done, ports, copy.files(), tests, settings, archive.parent / "fix.patch")
            return done
    finally:
        calls.close()


def not_red(report: TestReport, missing_module: str, expected: str = "", recorded: str = "") -> str:
    """Why a report of the buggy workspace is not the case's red state ("" when it is).

    `expected` is the exception the real failing output names; the sandbox's failures must name it too.
    A missing module is the environment's, unless the real failing output (`recorded`) misses the same one:
    then it is the bug's (code that asks for a module by a wrong name).
    """
    if report.green:
        return f"the named tests pass in the sandbox ({report.summary()})"
    if report.total == 0:
        return f"the named tests did not run ({report.summary()}): {report.raw.strip()[-300:]}"
    text = "\n".join(f.message + "\n" + f.traceback for f in report.failures) or report.raw
    found = re.search(missing_module, text) if missing_module else None
    if found and found.group(0) not in recorded:
        return f"the tests fail only because a module is missing ({found.group(0)})"
    if expected and expected not in text:
        first = report.failures[0].message.strip()[:200] if report.failures else report.summary()
        return f"the tests fail, but not with the case's {expected}: {first}"
    return ""


async def _check(done: dict[str, Any], ports: Ports, files: dict[str, bytes], tests: list[str],
                 settings: Settings, reference: Path) -> None:
    """A green Done must leave test files alone and turn the named tests green when synced afresh; then it
    gets its correctness verdict against the developers' fix (bench/correctness.py)."""
    changes: ChangeSet = done.pop("changes")
    if done["outcome"] == "already_green":
        done.update(outcome="not_reproduced", evidence="the loop's first test run was green")
        return
    if done["outcome"] != "green":
        return
    if done["extra"]["tests_edited"]:
        done.update(outcome="tests_edited", evidence="the change set edits a test file")
        return
    fixed = {p: t.encode("utf-8", "surrogateescape") for p, t in after(texts(files), changes).items()}
    await ports.sandbox.sync(fixed, frozenset(p for p in files if p not in fixed))
    rerun = await ports.sandbox.run_tests(tests, timeout=settings.sandbox.test_timeout)
    if not rerun.green:
        done.update(outcome="unverified", evidence=f"the change set rerun: {rerun.summary()}")
        return
    done["extra"]["verdict"] = (await verdict_in(ports.sandbox, files, changes, tests, reference)).to_json()


async def verdict_in(sandbox: SandboxPort, files: dict[str, bytes], changes: ChangeSet, tests: list[str],
                     reference: Path) -> Verdict:
    """The green fix against the developers' fix (`fix.patch`), on the calls that the named tests' files and
    every test file naming a changed definition make, and `VARIANTS` seeded variants of them."""
    buggy = texts(files)
    try:
        theirs = await asyncio.to_thread(lambda: patched(buggy, reference.read_text(encoding="utf-8")))
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return Verdict("unknown", str(exc)[:300])
    fixed = after(buggy, changes)
    names = {name.rsplit(".", 1)[-1] for _, name in [*changed(buggy, fixed), *changed(buggy, theirs)]}
    naming = [p for p, text in buggy.items() if p.endswith(".py") and is_test_path(p) and any(
        re.search(rf"\b{re.escape(n)}\b", text) for n in names)]
    test_files = list(dict.fromkeys([*(t.split("::")[0] for t in tests), *sorted(naming)]))
    return await judge(sandbox, buggy, fixed, theirs, test_files, variants=VARIANTS)


def _not_run(task: Task, outcome: str, why: str) -> dict[str, Any]:
    return {"outcome": outcome, "evidence": why, "extra": {"project": str(task.extra["project"]), "candidates": 0,
                                                          "first_green": None, "tests_edited": 0}}


class _CallSink:
    """The run's model calls into the bench's run store (the loop records them only for ports it opens)."""

    def __init__(self, settings: Settings) -> None:
        self._store: Any = None
        self._run_id = ""
        if settings.runs.enabled and settings.runs.store:
            from greenloop.run_records import RunStore

            self._store = RunStore.open(Path(settings.runs.store))

    def started(self, event: Any) -> None:
        if event.kind == "run_started":
            self._run_id = event.run_id

    def add(self, record: Any) -> None:
        if self._store is not None and self._run_id:
            self._store.add_call(self._run_id, record.model_dump(mode="json"))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
