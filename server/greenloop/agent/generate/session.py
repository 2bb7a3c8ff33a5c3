"""Entry points for front ends: `generate` (a recorded run of events) and `clarify` (questions first)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Done, Event
from greenloop.agent.generate.layouts import get_layout
from greenloop.agent.generate.pipeline import Generation, Job
from greenloop.agent.generate.planning import ask_questions, load_plan, render_answers
from greenloop.agent.generate.request import GenerateRequest, check_names, check_out_dir, check_prompt
from greenloop.agent.orchestration.run_context import RunContext
from greenloop.agent.orchestration.run_lifecycle import RunScope, recorded_run
from greenloop.agent.ports import Ports
from greenloop.llm import LLMClient, open_llm
from greenloop.settings import Settings


def generate(
    request: GenerateRequest, settings: Settings, *, ports: Ports | None = None
) -> AsyncIterator[Event]:
    """Generate a project into `request.out_dir`: RunStarted ... Done.

    Bad input (empty or huge prompt, unknown template, non-empty folder without force,
    an unusable edited plan) raises GreenloopError here, before any model call.
    The files are written only at the end; Done.changes lists them.
    """
    return _run(prepare(request, settings), settings, ports)


def prepare(request: GenerateRequest, settings: Settings) -> Job:
    """The checked job for a request; GreenloopError saying what to change."""
    out_dir = request.out_dir.expanduser().absolute()
    prompt = check_prompt(request.prompt, settings.generate, from_plan=request.from_plan is not None)
    plan, acceptance = None, None
    template = request.template
    if request.from_plan is not None:
        plan, template, stored, acceptance = load_plan(request.from_plan, request.template, settings)
        prompt = prompt or stored
    layout = get_layout(template)
    check_names(prompt, layout)
    check_out_dir(out_dir, force=request.force)
    return Job(
        out_dir=out_dir,
        layout=layout,
        request=prompt + render_answers(request.answers),
        small_steps=request.small_steps or settings.generate.small_steps,
        plan=plan,
        plan_file=request.from_plan,
        acceptance=acceptance,
    )


async def clarify(
    prompt: str,
    settings: Settings,
    *,
    template: str = "python",
    workspace: Path | None = None,
    llm: LLMClient | None = None,
) -> list[str]:
    """Questions whose answers would change the design (possibly none); pass the answers to `generate`.

    `workspace` is where prompt overrides are looked up (the output folder; default: the current one).
    """
    text = check_prompt(prompt, settings.generate, from_plan=False)
    layout = get_layout(template)
    check_names(text, layout)
    where = workspace or Path.cwd()
    if llm is not None:
        return await ask_questions(llm, layout, text, where)
    async with open_llm(settings) as client:
        return await ask_questions(client, layout, text, where)


def _run(job: Job, settings: Settings, ports: Ports | None) -> AsyncIterator[Event]:
    async def body(run: RunScope, events: EventSink) -> Done:
        async with run.ports(job.layout.name) as live:
            context = RunContext(
                settings=settings, ports=live, workspace=job.out_dir, template=job.layout.name, run_id=run.run_id,
                started=run.started, goal=job.request,
                tests_writable=True,  # the tests are the model's own, written in this run: they may be wrong
            )
            return await Generation(job, context).run(events)

    request = {
        "template": job.layout.name,
        "small_steps": job.small_steps,
        "from_plan": str(job.plan_file) if job.plan_file else None,
    }

    def nothing_written(message: str) -> str:
        return f"{message.rstrip('. ')}. Nothing was written to {job.out_dir}."

    return recorded_run(settings, "generate", job.out_dir, body, ports=ports, config={"generate_request": request},
                        user_error=nothing_written)
