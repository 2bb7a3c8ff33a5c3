"""The clarify and plan steps: questions back to the person, then a validated ProjectPlan."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from greenloop.agent.generate.examples import Acceptance, parse_line
from greenloop.agent.generate.layouts import Layout
from greenloop.agent.generate.plan_doc import parse_plan
from greenloop.agent.generate.project_plan import (
    PlannedFile,
    ProjectPlan,
    interface_modules,
    plan_schema,
    validate_plan,
)
from greenloop.agent.generate.request import read_plan_file
from greenloop.agent.prompting.files import render_prompt
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient, StructuredOutputError
from greenloop.settings import Settings
from greenloop_sandbox.packages import without

PROMPTS = "greenloop.agent.generate"
MAX_QUESTIONS = 5


class Questions(BaseModel):
    """The clarify step's reply."""

    questions: list[str] = Field(
        default_factory=list, description="Short questions; empty when all is clear."
    )


def _messages(user: str, workspace: Path) -> list[dict[str, str]]:
    system = render_prompt("generate_system", workspace, package=PROMPTS)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def step_messages(
    prompt: str, layout: Layout, request: str, workspace: Path, **extra: str
) -> list[dict[str, str]]:
    """The system prompt and one step's prompt, filled with the template and request the steps share."""
    user = render_prompt(
        prompt,
        workspace,
        package=PROMPTS,
        language=layout.language,
        template=layout.name,
        guidance=layout.guidance,
        request=request,
        **extra,
    )
    return _messages(user, workspace)


async def ask_questions(llm: LLMClient, layout: Layout, request: str, workspace: Path) -> list[str]:
    """Up to MAX_QUESTIONS questions whose answers would change the design."""
    user = render_prompt(
        "generate_clarify",
        workspace,
        package=PROMPTS,
        language=layout.language,
        template=layout.name,
        request=request,
        max_questions=str(MAX_QUESTIONS),
    )
    try:
        reply = await llm.structured(_messages(user, workspace), Questions, step="generate_clarify")
    except StructuredOutputError:
        return []  # clarifying is optional: no usable questions means none
    return [q.strip() for q in reply.questions if q.strip()][:MAX_QUESTIONS]


def render_answers(answers: dict[str, str] | None) -> str:
    """Answered questions as prompt text ("" when none were answered)."""
    pairs = [(q.strip(), a.strip()) for q, a in (answers or {}).items() if a.strip()]
    if not pairs:
        return ""
    return "\n## Answers to questions about the request\n" + "".join(f"- {q} {a}\n" for q, a in pairs)


async def make_plan(
    llm: LLMClient,
    layout: Layout,
    settings: Settings,
    request: str,
    workspace: Path,
    *,
    interfaces: str,
    small_steps: bool,
) -> ProjectPlan:
    """The model's file list for the `interfaces` document, validated for the template (invalid
    replies are repaired by the client); the plan holds both."""
    small = (
        "\n- Build the project in small steps: split it into 2-4 components, each with its own test file."
        if small_steps
        else ""
    )
    messages = step_messages(
        "generate_plan",
        layout,
        request,
        workspace,
        interfaces=interfaces,
        test_rule=layout.test_rule,
        max_files=str(settings.generate.max_files),
        managed=" or ".join(f"`{m}`" for m in layout.managed),
        small_steps=small,
    )
    modules = tuple(interface_modules(interfaces))
    schema = plan_schema(layout, settings.generate.max_files, interfaces=False, modules=modules)
    try:
        files = await llm.structured(messages, schema, step="generate_plan")
    except StructuredOutputError as exc:
        raise GreenloopError(
            f"The model did not produce a usable plan ({exc}). Run again, use a stronger model (--model), "
            "or describe the program more plainly."
        ) from exc
    full = plan_schema(layout, settings.generate.max_files)
    plan = full.model_validate({**files.model_dump(), "interfaces": interfaces})
    return with_manifest(plan, layout)


def load_plan(path: Path, default_template: str, settings: Settings) -> tuple[ProjectPlan, str, str, Acceptance]:
    """(plan, template, request, acceptance examples) from an edited plan.md; GreenloopError saying what to fix.

    The examples are the person's as the plan lists them (the request is not asked again for them)."""
    from greenloop.agent.generate.layouts import get_layout

    try:
        doc = parse_plan(read_plan_file(path))
        examples = tuple(parse_line(row) for row in doc.examples or [])
    except ValueError as exc:
        raise GreenloopError(f"{path}: {exc}. Edit the plan and run again.") from exc
    layout = get_layout(doc.template or default_template)
    plan = validate_plan(doc.plan, layout, settings.generate.max_files + 1, source=str(path))
    return with_manifest(plan, layout), layout.name, doc.request, Acceptance(doc.module, examples)


def with_manifest(plan: ProjectPlan, layout: Layout) -> ProjectPlan:
    """The plan with the template's manifest listed first (greenloop writes it, not the model), and
    with only the packages that need installing (`_needed_packages`)."""
    plan = plan.model_copy(update={"packages": _needed_packages(plan, layout)})
    manifest = layout.managed[0]
    if any(f.path == manifest for f in plan.files):
        return plan
    first = plan.components[0] if plan.components else "main"
    entry = PlannedFile(
        path=manifest,
        purpose="Project manifest, written by greenloop from the packages list.",
        component=first,
    )
    return plan.model_copy(update={"files": [entry, *plan.files]})


def manifests(plan: ProjectPlan, layout: Layout) -> dict[str, str]:
    """The text of every planned file greenloop writes itself."""
    return {
        f.path: layout.render_manifest(f.path, plan.name, plan.packages)
        for f in plan.files
        if f.path in layout.managed
    }


def plan_for_prompt(plan: ProjectPlan, managed: Collection[str]) -> str:
    """The plan as each file request shows it: summary, interfaces, the file list.

    The files the model writes come first; the ones greenloop writes (`managed`) last, marked so.
    Listed first, the manifest primed the 0.5B model to write a pyproject.toml as `fizzbuzz.py`.
    """
    ours = [f for f in plan.files if f.path in managed]
    listing = "".join(
        f"- `{f.path}`{' (test)' if f.test else ''}: {f.purpose}\n" for f in plan.files if f.path not in managed
    )
    listing += "".join(f"- `{f.path}`: written by greenloop, not by you.\n" for f in ours)
    packages = ", ".join(plan.packages) or "none (standard library only)"
    return (
        f"Project: {plan.name}. {plan.summary.strip()}\n\n### Interfaces\n{plan.interfaces.strip()}\n\n"
        f"### Files\n{listing}\nThird-party packages: {packages}\n"
    )


def _needed_packages(plan: ProjectPlan, layout: Layout) -> list[str]:
    """The plan's packages that are some: not the toolchain, a built-in module, or the project's own code.

    The 0.5B model listed `python`, `pytest`, `csv` and the project itself; each cost a failed
    install (a host `pip download`) and a dependency line in the manifest.
    """
    own = {plan.name} | {PurePosixPath(f.path).parts[0].removesuffix(".py") for f in plan.files}
    return without(plan.packages, own | layout.provided)[0]
