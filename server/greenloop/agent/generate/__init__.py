"""Project generation from a prompt: (clarify) -> plan -> files -> tests -> the fix loop until green.

Front ends call `generate(GenerateRequest, settings)` and consume its events;
`clarify` returns questions whose answers go into `GenerateRequest.answers`.
"""

from greenloop.agent.generate.layouts import LAYOUTS, Layout, get_layout
from greenloop.agent.generate.plan_doc import PLAN_FILE
from greenloop.agent.generate.project_plan import PlannedFile, ProjectPlan
from greenloop.agent.generate.request import GenerateRequest
from greenloop.agent.generate.session import clarify, generate

TEMPLATES = tuple(LAYOUTS)

__all__ = [
    "PLAN_FILE",
    "TEMPLATES",
    "GenerateRequest",
    "Layout",
    "PlannedFile",
    "ProjectPlan",
    "clarify",
    "generate",
    "get_layout",
]
