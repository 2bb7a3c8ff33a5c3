"""The files step: each planned file from the model, dependencies first, a bounded number at once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from greenloop.agent.changes.syntax import first_error
from greenloop.agent.generate.examples import Acceptance
from greenloop.agent.generate.fixtures import drop_fixture_imports
from greenloop.agent.generate.interfaces import outline_code_blocks
from greenloop.agent.generate.layouts import Layout, crate_name
from greenloop.agent.generate.planning import plan_for_prompt
from greenloop.agent.generate.project_plan import PlannedFile, ProjectPlan
from greenloop.agent.generate.raised import define_raised
from greenloop.agent.generate.rebound import rename_rebound
from greenloop.agent.generate.script_tail import guard_script_tail
from greenloop.agent.generate.sense import Senseless, senseless_tests, without_tests
from greenloop.agent.generate.sense import problem as sense_problem
from greenloop.agent.generate.shadowed import unshadow
from greenloop.agent.generate.submodules import point_at_classes
from greenloop.agent.generate.unbound import import_unbound
from greenloop.agent.generate.written_tests import (
    add_missing_imports,
    check_test_file,
    import_hints,
    without_copies,
)
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.prompting.files import render_prompt
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient
from greenloop.retrieval import outline

PROMPTS = "greenloop.agent.generate"


@dataclass
class FileWriter:
    """Asks the model for one planned file, showing it the plan and the files it depends on."""

    llm: LLMClient
    layout: Layout
    plan: ProjectPlan
    request: str
    workspace: Path  # prompt overrides live in <workspace>/.greenloop/prompts/
    attempts: int
    context_chars: int  # budget for the dependencies' text
    acceptance: Acceptance = field(default_factory=Acceptance)  # the request's examples: a test may not contradict them

    def __post_init__(self) -> None:
        # the plan as the model sees it (summary, interfaces, file list); test files see the
        # interfaces' code as outlines, as they see the code they test
        self._plan_text = plan_for_prompt(self.plan, self.layout.managed)
        interfaces = outline_code_blocks(self.plan.interfaces, self.layout)
        outlined = self.plan.model_copy(update={"interfaces": interfaces})
        self._test_plan_text = plan_for_prompt(outlined, self.layout.managed)

    async def write(self, spec: PlannedFile, known: Mapping[str, str]) -> str:
        """The file's text; GreenloopError when no reply holds code after `attempts` requests."""
        system = {"role": "system", "content": render_prompt("generate_system", self.workspace, package=PROMPTS)}
        prompt = self._prompt(spec, known)
        messages = [system, {"role": "user", "content": prompt}]
        problem, unparsed, sensible = "", None, None
        others = [*(f.path for f in self.plan.files), *self.layout.managed]
        for attempt in range(self.attempts):
            reply = await self.llm.complete(messages, step="generate_file", attempt=attempt)
            code = extract_code(reply, spec.path, others)
            text = self._mended(spec, code.text, known) if not code.problem else code.text
            problem = code.problem or self._test_problem(spec, text, known)
            if not problem and (found := self._senseless(spec, text, known)):
                problem = sense_problem(found)  # asked again; the last such reply kept without those tests
                sensible = without_tests(text, found) or text
            if not problem:
                line = first_error(spec.path, text)
                if line is not None and spec.test and (whole := self._complete_part(spec, text, known)):
                    return self._mended(spec, whole, known)  # the mends that need a parse run now
                if line is None:
                    return text
                unparsed = text  # kept if no later reply parses: the fix loop then sees the error
                problem = f"it does not parse (a syntax error at line {line})"
            repair = render_prompt(
                "generate_file_repair",
                self.workspace,
                package=PROMPTS,
                path=spec.path,
                problem=problem,
                fence=self.layout.fence_for(spec.path),
            )
            # asked afresh, without the unusable reply (docs/decisions/2026-11-generation-files-checks.md)
            messages = [system, {"role": "user", "content": f"{prompt}\n\n{repair}"}]
        if unparsed is not None:
            return unparsed
        if sensible is not None:
            return sensible
        raise GreenloopError(
            f"The model never returned the content of {spec.path} ({problem}; {self.attempts} requests). "
            "Run again, use a stronger model (--model), or simplify that file in the plan."
        )

    def _complete_part(self, spec: PlannedFile, text: str, known: Mapping[str, str]) -> str:
        """A test file cut off mid-statement (the reply hit the token limit): its longest head of whole
        lines that parses and still is a test file, when that is most of it; else "".

        The 1.5B model's slugify test went on writing asserts until the limit, twice in one run (bf93d33):
        the file did not parse, and asking again cost 585 s for a file of 22 lines.
        """
        rows = text.splitlines(keepends=True)
        for end in range(len(rows) - 1, max(len(rows) // 2, 1) - 1, -1):
            head = "".join(rows[:end])
            if first_error(spec.path, head) is None and not self._test_problem(spec, head, known):
                return head
        return ""

    def _test_problem(self, spec: PlannedFile, text: str, known: Mapping[str, str]) -> str:
        """Why a test file's text is not one (it holds no test, or rewrites the code it should import)."""
        if not spec.test:
            return ""
        return check_test_file(self.layout, spec.path, text, self._shown(spec, known), crate_name(self.plan.name))

    def _senseless(self, spec: PlannedFile, text: str, known: Mapping[str, str]) -> list[Senseless]:
        """The tests of a python test file that cannot pass whatever the code does (sense.py)."""
        if not spec.test or not spec.path.endswith(".py") or self.layout.name != "python":
            return []
        code = {p: t for p, t in known.items() if self.layout.is_source(p)}
        return senseless_tests(text, code, self.plan.interfaces, self.acceptance.examples)

    def _mended(self, spec: PlannedFile, text: str, known: Mapping[str, str]) -> str:
        """A test file without its copies of the code it tests, and with the import it forgot; a
        source file with its example code under a `__main__` guard and no attribute hiding a method
        (shadowed.py); either with the names it uses and never binds imported, where one place
        defines them (unbound.py), and no local that hides a name it calls (rebound.py); a source
        file with a class for the exceptions it raises that nothing defines (raised.py); either with
        `from pkg import X` pointed at the class `X` of `pkg/X.py`, not the module (submodules.py); a test
        file without imports of pytest's own fixtures (fixtures.py)."""
        crate = crate_name(self.plan.name)
        if not spec.test:
            if not self.layout.is_source(spec.path):
                return text
            text = unshadow(spec.path, guard_script_tail(spec.path, text))
            elsewhere = " ".join(f.purpose for f in self.plan.files if f.path != spec.path and not f.test)
            text = define_raised(spec.path, point_at_classes(spec.path, text, known), known, elsewhere)
            return rename_rebound(spec.path, import_unbound(self.layout, spec.path, text, known, crate))
        shown = self._shown(spec, known)
        text = add_missing_imports(self.layout, spec.path, without_copies(self.layout, spec.path, text, shown, crate),
                                   shown, crate)
        text = drop_fixture_imports(spec.path, point_at_classes(spec.path, text, known))
        return rename_rebound(spec.path, import_unbound(self.layout, spec.path, text, known, crate))

    def _shown(self, spec: PlannedFile, known: Mapping[str, str]) -> dict[str, str]:
        """The written files a request for `spec` shows, path -> text."""
        return {p: known[p] for p in self._wanted(spec) if p in known}

    def _wanted(self, spec: PlannedFile) -> list[str]:
        """The files a request for `spec` shows: its dependencies, and for a test its component's code.

        Manifests greenloop writes are left out: the plan lists the packages, and the
        0.5B model returned a pyproject.toml shown last as its test file.
        """
        wanted = list(spec.depends_on)
        if spec.test:
            wanted += [
                f.path for f in self.plan.files_of(spec.component) if not f.test and f.path not in wanted
            ]
        return [p for p in wanted if p not in self.layout.managed]

    def _prompt(self, spec: PlannedFile, known: Mapping[str, str]) -> str:
        kind_rule = "Do not write tests in this file."
        if spec.test:
            hints = import_hints(self.layout, spec.path, self._wanted(spec), crate_name(self.plan.name))
            how = f" ({'; '.join(f'`{h}`' for h in hints)})" if hints else ""
            kind_rule = (
                f"It is a test file for {self.layout.test_runner}: import the code it tests{how}, do not "
                "write that code again, and test the behaviour the plan describes with a few clear cases."
            )
        return render_prompt(
            "generate_file",
            self.workspace,
            package=PROMPTS,
            path=spec.path,
            language=self.layout.language,
            template=self.layout.name,
            guidance=self.layout.guidance,
            request=self.request or "(see the plan)",
            plan=self._test_plan_text if spec.test else self._plan_text,
            dependencies=self._dependencies(spec, known),
            kind="test file" if spec.test else "source file",
            purpose=spec.purpose or "(see the interfaces)",
            kind_rule=kind_rule,
            fence=self.layout.fence_for(spec.path),
        )

    def _dependencies(self, spec: PlannedFile, known: Mapping[str, str]) -> str:
        """The files this one depends on, within the character budget.

        A source file sees them whole. A test file sees the code under test as an
        outline (signatures, doc lines, what raises): tests follow the interfaces,
        and the 0.5B model copied a whole module shown to it back as the "test".
        """
        blocks, left = [], self.context_chars
        for path in self._wanted(spec):
            text = known.get(path)
            if text is None:
                continue
            shown = outline(path, text) if spec.test and not self.layout.is_test(path) else ""
            if shown:
                block = f"### {path} (outline: what it defines; bodies not shown)\n{shown}\n"
            else:
                block = f"### {path}\n```{self.layout.fence_for(path)}\n{text.rstrip()}\n```\n"
            if len(block) > left:
                blocks.append(f"### {path}\n(omitted: too long; follow the interfaces)\n")
                continue
            left -= len(block)
            blocks.append(block)
        return "\n## Files it depends on (already written)\n" + "\n".join(blocks) if blocks else ""


def repoint_packages(paths: Sequence[str], known: Mapping[str, str]) -> dict[str, str]:
    """The package `__init__.py` files among `paths` whose `from pkg import X` now points at the class of
    `pkg/X.py` (submodules.py), path -> new text: they are written before the modules they import."""
    changed = {}
    for path in paths:
        if path.endswith("__init__.py") and path in known:
            text = point_at_classes(path, known[path], known)
            if text != known[path]:
                changed[path] = text
    return changed


def build_order(specs: Sequence[PlannedFile]) -> dict[str, list[str]]:
    """For each file, the files of `specs` it must wait for (dependencies first; cycles broken)."""
    by_path = {s.path: s for s in specs}
    placed: list[str] = []
    visiting: set[str] = set()

    def visit(path: str) -> None:
        if path in placed or path in visiting:
            return  # done, or a cycle: that edge is dropped
        visiting.add(path)
        for dep in by_path[path].depends_on:
            if dep in by_path:
                visit(dep)
        visiting.discard(path)
        placed.append(path)

    for spec in specs:
        visit(spec.path)
    rank = {p: i for i, p in enumerate(placed)}
    return {s.path: [d for d in s.depends_on if d in by_path and rank[d] < rank[s.path]] for s in specs}


async def write_files(
    writer: FileWriter, specs: Sequence[PlannedFile], known: dict[str, str], parallel: int
) -> AsyncIterator[tuple[str, str]]:
    """Yield (path, text) as files finish; at most `parallel` model calls at once.

    `known` holds files written earlier (other components, manifests) and gets each new file.
    The first failure cancels the rest and is raised; closing the iterator cancels everything.
    """
    waits = build_order(specs)
    finished = {s.path: asyncio.Event() for s in specs}
    gate = asyncio.Semaphore(max(1, parallel))
    results: asyncio.Queue[tuple[str, str] | BaseException] = asyncio.Queue()

    async def one(spec: PlannedFile) -> None:
        try:
            for dep in waits[spec.path]:
                await finished[dep].wait()
            async with gate:
                text = await writer.write(spec, known)
            known[spec.path] = text
            finished[spec.path].set()
            await results.put((spec.path, text))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await results.put(exc)

    tasks = [asyncio.create_task(one(s), name=f"generate {s.path}") for s in specs]
    try:
        for _ in specs:
            item = await results.get()
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
