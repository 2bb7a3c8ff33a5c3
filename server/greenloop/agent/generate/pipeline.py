"""One generation run: plan -> files -> tests -> fix loop (per component in small steps), then the output."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Done, EnvironmentChanged, Event, Message, Outcome
from greenloop.agent.generate.acceptance import acceptance_path, ask_examples, render_acceptance
from greenloop.agent.generate.examples import Acceptance
from greenloop.agent.generate.files import FileWriter, repoint_packages, write_files
from greenloop.agent.generate.interfaces import count_modules, write_interfaces
from greenloop.agent.generate.layouts import Layout
from greenloop.agent.generate.output import save_plan, write_output
from greenloop.agent.generate.plan_doc import AcceptanceSection
from greenloop.agent.generate.planning import make_plan, manifests
from greenloop.agent.generate.project_plan import PlannedFile, ProjectPlan
from greenloop.agent.orchestration.loop import fix_loop
from greenloop.agent.orchestration.run_context import RunContext
from greenloop.agent.ports import Refused
from greenloop.errors import GreenloopError

GREEN = ("green", "already_green")


class BudgetStop(GreenloopError):
    """The run's budget (tokens, cost, time) ran out before the files were all written."""


@dataclass
class Job:
    """A checked request: everything the run needs before the first model call."""

    out_dir: Path
    layout: Layout
    request: str  # the prompt (+ answers) as the model sees it
    small_steps: bool
    plan: ProjectPlan | None = None  # given when re-running from an edited plan
    plan_file: Path | None = None  # that plan's file
    acceptance: Acceptance | None = None  # that plan's examples (None: asked of the model, from the request)


@dataclass
class Generation:
    """One generation run after the ports are open: its context, working copy and what it has written so far."""

    job: Job
    context: RunContext
    copy: WorkingCopy = field(init=False)
    known: dict[str, str] = field(default_factory=dict)  # every file's text so far
    iterations: int = 0
    last: Done | None = None  # the latest fix loop's Done
    built: list[str] = field(default_factory=list)  # components that went through their loop
    acceptance: Acceptance = field(default_factory=Acceptance)  # the request's examples, as checked

    def __post_init__(self) -> None:
        self.copy = WorkingCopy.empty(self.job.out_dir)

    def note(self, text: str, level: Literal["info", "warning", "error"] = "info") -> Event:
        event: Event = self.context.stamp(Message(text=text, level=level))
        return event

    async def run(self, events: EventSink) -> Done:
        """The run, every event to `events`; returns its one Done."""
        try:
            plan = self.job.plan
            await self._examples(events)
            if plan is None:
                interfaces = await write_interfaces(
                    self.context.ports.llm, self.job.layout, self.job.request, self.job.out_dir
                )
                events.emit(self.note(f"Interfaces: {count_modules(interfaces)} module(s); planning the files"))
                plan = await self._plan_step(interfaces)
            job = self.job
            saved = save_plan(job.out_dir, plan, job.layout.name, job.request, source=job.plan_file,
                              acceptance=self._section(plan))
            events.emit(self.note(f"Plan: {_describe(plan)}; saved as {saved}"))
            await self._install(plan, events)
            steps = small_steps(plan) if self.job.small_steps else [list(plan.components)]
            for i, components in enumerate(steps, 1):
                await self._build(plan, components, i, len(steps), events)
                if self.last is None or self.last.outcome not in GREEN:
                    break
        except BudgetStop as exc:
            return self._finish(None, error=f"Stopped: {exc}", outcome="budget")
        except GreenloopError as exc:
            return self._finish(None, error=str(exc))
        return self._finish(plan)

    async def _examples(self, events: EventSink) -> None:
        """The request's examples (acceptance tests): the edited plan's, else asked of the model and checked."""
        job = self.job
        if job.acceptance is not None:
            self.acceptance = job.acceptance
            return
        self.acceptance = await ask_examples(self.context.ports.llm, job.layout, job.request, job.out_dir)
        found, dropped = len(self.acceptance.examples), len(self.acceptance.dropped)
        if found or dropped:
            left = f"; {dropped} dropped (the request does not state them, see the plan)" if dropped else ""
            events.emit(self.note(f"Acceptance: {found} example(s) from the request become tests the loop keeps{left}"))

    def _section(self, plan: ProjectPlan) -> AcceptanceSection | None:
        """What plan.md shows of the acceptance tests (nothing for a template without them)."""
        if self.job.layout.name != "python":
            return None
        a = self.acceptance
        return AcceptanceSection(examples=[e.line() for e in a.examples], module=a.module, dropped=list(a.dropped),
                                 path=acceptance_path([f.path for f in plan.files]))

    def _write_acceptance(self, plan: ProjectPlan) -> Event | None:
        """The acceptance test file, rendered from the examples into the copy and kept as the spec (None: none)."""
        sources = {p: t for p, t in self.known.items() if self.job.layout.is_source(p)}
        text = render_acceptance(self.acceptance, sources)
        if not text:
            return None
        path = acceptance_path([f.path for f in plan.files])
        self._keep(path, text)
        self.context.spec_tests.add(path)
        return self.note(f"Wrote {path}: {len(self.acceptance.examples)} example(s) from the request, "
                         "which the fix loop keeps as they are")

    async def _plan_step(self, interfaces: str) -> ProjectPlan:
        job = self.job
        return await make_plan(
            self.context.ports.llm,
            job.layout,
            self.context.settings,
            job.request,
            job.out_dir,
            interfaces=interfaces,
            small_steps=job.small_steps,
        )

    async def _install(self, plan: ProjectPlan, events: EventSink) -> None:
        if not plan.packages:
            return
        events.emit(self.note(f"Installing {', '.join(plan.packages)} in the sandbox"))
        result = await self.context.ports.sandbox.install(plan.packages)
        detail = " ".join(plan.packages)
        if isinstance(result, Refused):  # a spec the sandbox will not take: said, like a failed install
            ok, output, what = False, f"refused: {result.reason}", f"was refused ({result.reason})"
        else:
            ok, output, what = result.ok, (result.stdout + result.stderr)[-2000:], "failed"
        events.emit(self.context.stamp(
            EnvironmentChanged(iteration=0, action="install", detail=detail, ok=ok, output=output)
        ))
        if ok:
            self.context.ledger.environment_changed(plan.packages)
        else:
            events.emit(self.note(f"Installing {detail} {what}; the fix loop will see the import errors.", "warning"))

    async def _build(
        self, plan: ProjectPlan, components: list[str], step: int, steps: int, events: EventSink
    ) -> None:
        """Files, then tests, then the fix loop for some components (all of them outside small steps)."""
        specs = [f for f in plan.files if f.component in components]
        label = f"component {step}/{steps} '{components[0]}'" if self.job.small_steps else "the project"
        sources = [f for f in specs if not f.test and f.path not in self.job.layout.managed]
        tests = [f for f in specs if f.test]
        for path, text in manifests(plan, self.job.layout).items():
            if any(f.path == path for f in specs):
                self._keep(path, text)
        for kind, group in (("source files", sources), ("tests", tests)):
            if group:
                events.emit(self.note(f"Writing {len(group)} {kind} of {label}"))
                await self._write(plan, group, events)
        if step == steps and (wrote := self._write_acceptance(plan)) is not None:
            events.emit(wrote)
        events.emit(self.note(f"Running the tests of {label}" + (" and the earlier ones" if step > 1 else "")))
        done = await fix_loop(self.context, self.copy, events)
        self.last = done
        self.iterations += done.iterations
        self.built += components

    async def _write(self, plan: ProjectPlan, group: list[PlannedFile], events: EventSink) -> None:
        settings = self.context.settings
        writer = FileWriter(
            llm=self.context.ports.llm,
            layout=self.job.layout,
            plan=plan,
            request=self.job.request,
            workspace=self.job.out_dir,
            attempts=settings.generate.file_attempts,
            context_chars=4 * settings.retrieval.context_tokens,
            acceptance=self.acceptance,
        )
        known = {
            **self.known,
            **{p: t for p in self.copy.paths() if (t := self.copy.read(p)) is not None},
        }
        if (why := self.context.over_budget()) is not None:
            raise BudgetStop(why)
        async for path, text in write_files(writer, group, known, settings.generate.parallel_files):
            self._keep(path, text)
            events.emit(self.note(f"Wrote {path} ({len(text.splitlines())} lines)"))
        for path, text in repoint_packages([f.path for f in group], known).items():
            self._keep(path, text)

    def _keep(self, path: str, text: str) -> None:
        self.known[path] = text
        self.copy.write(path, text)

    def _finish(self, plan: ProjectPlan | None, *, error: str = "", outcome: Outcome = "error") -> Done:
        """The run's Done: writes the output when the files exist, and says what is on disk."""
        out = self.job.out_dir
        saved_plan = (out / ".greenloop" / "plan.md").is_file()
        if error or self.last is None:
            where = "except the plan (.greenloop/plan.md; re-run with --from-plan)" if saved_plan else ""
            reason = (error or "Generation stopped").rstrip(". ")
            summary = f"{reason}. Nothing was written to {out} {where}".strip() + "."
            return self.context.done(WorkingCopy.empty(out), outcome, summary, self.iterations, error)
        outcome = "green" if self.last.outcome in GREEN else self.last.outcome
        done = self.context.done(self.copy, outcome, "", self.iterations, self.last.evidence)
        try:
            done.changes = write_output(out, done.changes)
        except GreenloopError as exc:
            done.outcome, done.summary, done.evidence = "error", str(exc), str(exc)
            return done
        done.summary = _summary(plan, self, len(done.changes.files))
        return done


def small_steps(plan: ProjectPlan) -> list[list[str]]:
    """Components in plan order, one step each; one without tests joins the next step (or the last)."""
    steps: list[list[str]] = []
    pending: list[str] = []
    for component in plan.components:
        pending.append(component)
        if any(f.test for f in plan.files_of(component)):
            steps.append(pending)
            pending = []
    if pending:
        if steps:
            steps[-1] += pending
        else:
            steps.append(pending)
    return steps


def _describe(plan: ProjectPlan) -> str:
    tests = sum(1 for f in plan.files if f.test)
    comps = ", ".join(plan.components)
    return f"{len(plan.files)} files ({tests} test files) in {len(plan.components)} component(s): {comps}"


def _summary(plan: ProjectPlan | None, gen: Generation, count: int) -> str:
    assert gen.last is not None
    out = gen.job.out_dir
    if gen.last.outcome in GREEN:
        how = f"after {gen.iterations} fix iteration(s)" if gen.iterations else "on the first run"
        stated = len(gen.acceptance.examples) if gen.context.spec_tests else 0
        also = f", the {stated} example(s) the request states among them" if stated else ""
        return f"Generated {count} files in {out}; the tests pass {how}{also}."
    missing = [c for c in (plan.components if plan else []) if c not in gen.built]
    rest = f" Components not built: {', '.join(missing)}." if missing else ""
    return (
        f"Generated {count} files in {out}, but the tests do not pass yet ({gen.last.outcome}): "
        f"{gen.last.summary}{rest} The files are there to inspect; run `greenloop fix {out}` to keep going."
    )
