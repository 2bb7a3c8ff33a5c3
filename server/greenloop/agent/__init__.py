"""The loops (fix, improve; generation in agent.generate) as async generators of events.

Pure orchestration over two ports (`ports.py`: the model client and the sandbox) and the
workspace's WorkingCopy. Front ends consume the events; they add no loop logic.
"""

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import ChangeSet, Done, Event, FileChange
from greenloop.agent.orchestration.focus import Focus
from greenloop.agent.orchestration.loop import fix_loop
from greenloop.agent.orchestration.run_context import RunContext
from greenloop.agent.orchestration.run_lifecycle import new_run_id
from greenloop.agent.orchestration.session import FixRequest, apply_changes, fix, improve, run_tests
from greenloop.agent.orchestration.test_items import TestItemsRun, list_tests, run_test_items
from greenloop.agent.plan import DebugPlan
from greenloop.agent.ports import Ports, open_ports

__all__ = [
    "ChangeSet",
    "DebugPlan",
    "Done",
    "Event",
    "FileChange",
    "FixRequest",
    "Focus",
    "Ports",
    "RunContext",
    "TestItemsRun",
    "WorkingCopy",
    "apply_changes",
    "fix",
    "fix_loop",
    "improve",
    "list_tests",
    "new_run_id",
    "open_ports",
    "run_test_items",
    "run_tests",
]
