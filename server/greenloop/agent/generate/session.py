"""Entry points for front ends: `generate` (a recorded run of events) and `clarify` (questions first)."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path

from greenloop.agent.events import Done, Event, Message, RunStarted
from greenloop.agent.generate.layouts import get_layout
from greenloop.agent.generate.pipeline import Generation, Job
from greenloop.agent.generate.planning import ask_questions, load_plan, render_answers
from greenloop.agent.generate.request import GenerateRequest, check_out_dir, check_prompt
from greenloop.agent.loop import LoopContext
from greenloop.agent.ports import Ports, open_ports
from greenloop.agent.recording import RunRecorder
from greenloop.agent.session import new_run_id
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient, open_llm
from greenloop.settings import Settings

log = logging.getLogger(__name__)


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
    plan = None
    template = request.template
    if request.from_plan is not None:
        plan, template, stored = load_plan(request.from_plan, request.template, settings)
        prompt = prompt or stored
    layout = get_layout(template)
    check_out_dir(out_dir, force=request.force)
    return Job(
        out_dir=out_dir,
        layout=layout,
        request=prompt + render_answers(request.answers),
        small_steps=request.small_steps or settings.generate.small_steps,
        plan=plan,
        plan_file=request.from_plan,
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
    where = workspace or Path.cwd()
    if llm is not None:
        return await ask_questions(llm, layout, text, where)
    async with open_llm(settings) as client:
        return await ask_questions(client, layout, text, where)


async def _run(job: Job, settings: Settings, ports: Ports | None) -> AsyncIterator[Event]:
    run_id = new_run_id()
    start = time.monotonic()
    recorder = RunRecorder(settings, job.out_dir)
    try:
        started = RunStarted(
            run_id=run_id,
            mode="generate",
            workspace=str(job.out_dir),
            config={
                **settings.model_dump(mode="json", exclude={"llm": {"api_key"}}),
                "generate_request": {
                    "template": job.layout.name,
                    "small_steps": job.small_steps,
                    "from_plan": str(job.plan_file) if job.plan_file else None,
                },
            },
            seed=settings.llm.seed,
        )
        recorder.event(started)
        yield started
        if recorder.problem:
            yield Message(run_id=run_id, text=recorder.problem, level="warning")
        opened: AbstractAsyncContextManager[Ports] = (
            nullcontext(ports)
            if ports
            else open_ports(settings, job.layout.name, sink=recorder.call, label=run_id)
        )
        async with opened as live:
            ctx = LoopContext(
                settings=settings, ports=live, workspace=job.out_dir, template=job.layout.name, run_id=run_id,
                goal=job.request,
                tests_writable=True,  # the tests are the model's own, written in this run: they may be wrong
            )
            ctx.started = start
            async for event in Generation(job, ctx).run():
                recorder.event(event)
                yield event
    except GreenloopError as exc:
        reason = str(exc).rstrip(". ")
        yield _error_done(recorder, run_id, start, f"{reason}. Nothing was written to {job.out_dir}.")
    except Exception as exc:  # a front end must survive anything a run does; the message says what broke
        log.exception("generate run %s failed", run_id)
        yield _error_done(recorder, run_id, start, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        recorder.close()


def _error_done(recorder: RunRecorder, run_id: str, start: float, message: str) -> Done:
    done = Done(
        run_id=run_id,
        at=round(time.monotonic() - start, 3),
        outcome="error",
        summary=message,
        evidence=message,
    )
    recorder.event(done)
    return done
