"""Entry points for a test explorer: the workspace's tests, and a run of chosen ones, in one sandbox each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.ports import choose_template, open_sandbox_for
from greenloop.settings import Settings
from greenloop_sandbox import TestCollection, TestReport


@dataclass
class TestItemsRun:
    """A run of chosen tests: the report, and the ids asked for that the workspace no longer has."""

    __test__ = False

    report: TestReport
    missing: list[str] = field(default_factory=list)


async def list_tests(workspace: Path, settings: Settings, *, overlays: Mapping[str, str] | None = None
                     ) -> TestCollection:
    """The workspace's tests (unsaved buffers included) as the sandbox's runner collects them."""
    copy = WorkingCopy.from_workspace(workspace, overlays)
    template = choose_template(settings, copy.files())
    async with open_sandbox_for(settings, template, workspace=workspace) as sandbox:
        await sandbox.sync(copy.files())
        return await sandbox.collect_tests(timeout=settings.sandbox.test_timeout)


async def run_test_items(workspace: Path, settings: Settings, test_ids: list[str] | None, *,
                         overlays: Mapping[str, str] | None = None) -> TestItemsRun:
    """Run `test_ids` (None: all). Ids the runner no longer collects are left out and named in `missing`:
    one vanished id would otherwise fail the whole run (pytest stops on an id it cannot find)."""
    copy = WorkingCopy.from_workspace(workspace, overlays)
    template = choose_template(settings, copy.files())
    timeout = settings.sandbox.test_timeout
    async with open_sandbox_for(settings, template, workspace=workspace) as sandbox:
        await sandbox.sync(copy.files())
        missing: list[str] = []
        if test_ids is not None and sandbox.template.collect_command:
            known = {t.test_id for t in (await sandbox.collect_tests(timeout=timeout)).tests}
            missing = [t for t in test_ids if t not in known]
            test_ids = [t for t in test_ids if t in known]
            if not test_ids:
                return TestItemsRun(TestReport(), missing)
        report = await sandbox.run_tests(test_ids if sandbox.template.selects_tests else None, timeout=timeout)
        if test_ids is not None and not sandbox.template.collect_command:
            ran = {c.test_id for c in report.cases}
            missing = [t for t in test_ids if t not in ran]
        return TestItemsRun(report, missing)
