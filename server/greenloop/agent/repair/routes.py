"""Which way a round asks for a fix: the route (function, file, blocks, install), its target, its prompt.

The common case is a function: the model sees that function, the failing output and the
tests as the spec, and writes the function again as plain code. A module the code imports
that is not installed is an `install`; code that does not load is a whole-file repair. When a
round brings nothing better the next one changes one thing (`ladder`), until the ladder is spent.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import Action, DebugPlan, EditAction, InstallAction, WriteAction
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.repair.blocks import parse_blocks
from greenloop.agent.repair.splice import SpliceError, Target, Unchanged, splice
from greenloop.retrieval import Definition, Location, RepoIndex, language_of
from greenloop_sandbox import TestReport
from greenloop_sandbox.languages import languages

Route = Literal["function", "file", "blocks", "install"]
FAILURES_SHOWN = 3
TRACEBACK_LINES = 30
SPEC_LINES = 40
FILE_ROUTE_LINES = 400  # longer files are not asked for whole
_BROKEN = ("SyntaxError", "IndentationError", "ImportError", "NameError: name", "TabError")
CODE_UNDER_TEST_LINES = 60  # a test route shows the code the test calls, each definition up to this long
# A check in a test: python's assert / unittest's assertX / pytest.raises, JS expect / assert, Rust assert!
_CHECK = re.compile(r"\bassert\w*\b|\braises\(|\bexpect\(")


class ReplyRejected(ValueError):
    """A reply that gives no candidate, and why (kept in the records, never a crash)."""


class ReplyUnchanged(ReplyRejected):
    """A reply whose code is the code already in the file."""


@dataclass(frozen=True)
class Approach:
    """What one round tries: a route, its target and how hot it samples."""

    route: Route
    target: Target
    why: str  # why this approach (first choice, next location, hotter, ...)
    hotter: float = 0.0  # added to every candidate's temperature (the greedy one too, when > 0)
    package: str = ""  # the install route's package
    feedback: str = ""  # what an earlier attempt gave, said to the model
    bare: bool = False  # the one-shot baseline's bare prompt: failures and the file, nothing else
    anew: bool = False  # the function written again from the tests rather than patched
    test: bool = False  # the target is a failing test written in this run: its expected values may be wrong

    @property
    def label(self) -> str:
        if self.route == "install":
            return f"install {self.package}"
        if self.route == "function":
            return f"`{self.target.symbol}` in {self.target.path}"
        return f"{self.route} {self.target.path}"


def ladder(
    locations: list[Location], report: TestReport, copy: WorkingCopy, tests: TestFiles, *, oneshot: bool = False,
    failing_tests: Sequence[Target] = (),
) -> list[Approach]:
    """The approaches for this state, in order: a round that brings nothing better moves one step on.

    When the tests may change (`tests.writable`: generation's own tests, `loop.edit_tests`), the
    first failing test is a rung of its own right after the top-ranked function: a test written
    in the same run as the code is as likely to expect a wrong value as the code is to compute one.
    """
    sources = [loc for loc in locations if not tests.is_test(loc.path) and copy.read(loc.path) is not None]
    if not sources:
        sources = _imported_sources(report, copy, tests)
    if oneshot:
        return [replace(_file(sources[0].path, "the whole file, once (baseline)"), bare=True)] if sources else []
    steps: list[Approach] = []
    missing, package = _missing_module(report, copy)
    if missing:
        steps.append(Approach("install", Target("", missing, "module", 0, 0), "a module is not installed",
                              package=package))
    broken = _broken_file(report, copy, tests)
    if broken:
        steps.append(_file(broken, "the code does not load"))
    functions = [loc for loc in sources if loc.kind in ("function", "method")]
    if functions:
        top = _target(functions[0])
        steps.append(Approach("function", top, "the top-ranked function"))
        steps.extend(Approach("function", _target(loc), "the next-ranked function") for loc in functions[1:2])
        steps.append(Approach("function", top, "the top-ranked function, sampled hotter", hotter=0.3))
    if sources:
        path = sources[0].path
        if functions and _mostly(copy, top):  # the whole file would be the same request again
            steps.append(Approach("function", top, "the top-ranked function, written anew from the tests",
                                  anew=True))
        elif _lines(copy, path) <= FILE_ROUTE_LINES and not any(s.route == "file" and s.target.path == path
                                                                    for s in steps):
            steps.append(_file(path, "the whole file"))
        steps.append(Approach("blocks", Target(path, path, "file", 1, _lines(copy, path)),
                              "changes in several places"))
    if tests.writable and failing_tests:
        at = next((i + 1 for i, s in enumerate(steps) if s.route == "function"), len(steps))
        steps.insert(at, Approach("function", failing_tests[0], "the failing test: written with the code, "
                                  "its expected values may be wrong", test=True))
    return steps


def _file(path: str, why: str) -> Approach:
    return Approach("file", Target(path, path, "file", 1, 0), why)


def _target(loc: Location) -> Target:
    return Target(loc.path, loc.symbol, loc.kind, loc.start_line, loc.end_line)


def _mostly(copy: WorkingCopy, target: Target) -> bool:
    """The function is most of its file's code (imports and blank lines aside)."""
    rows = (copy.read(target.path) or "").splitlines()
    code = [r for r in rows if r.strip() and not r.lstrip().startswith(("import ", "from ", "#"))]
    return (target.end_line - target.start_line + 1) >= 0.8 * len(code)


def _lines(copy: WorkingCopy, path: str) -> int:
    return len((copy.read(path) or "").splitlines())


def _own_modules(copy: WorkingCopy) -> set[str]:
    names: set[str] = set()
    for path in copy.paths():
        parts = PurePosixPath(path).parts
        names.update(p.removesuffix(".py") for p in parts)
    return names


def _missing_module(report: TestReport, copy: WorkingCopy) -> tuple[str, str]:
    """(module, package) for the first module a failure says is not installed (by its language's
    message) and the project does not hold itself; ("", "") when there is none."""
    own = _own_modules(copy)
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        for language in languages():
            match = re.search(language.missing_module, text) if language.missing_module else None
            module = match.group(1).split(".")[0] if match else ""
            if module and module not in own:
                return module, language.package_for(module)
    return "", ""


def _broken_file(report: TestReport, copy: WorkingCopy, tests: TestFiles) -> str:
    """A source file named in a failure that says the code does not load (syntax, import, name errors)."""
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        if not any(word in text for word in _BROKEN):
            continue
        for path in reversed(re.findall(r"([\w./-]+\.\w+)", text)):
            known = _known(copy, path)
            if known and not tests.is_test(known) and language_of(known):
                return known
    return ""


def _known(copy: WorkingCopy, path: str) -> str:
    path = path.lstrip("./")
    for known in copy.paths():
        if known == path or path.endswith("/" + known):
            return known
    return ""


def _imported_sources(report: TestReport, copy: WorkingCopy, tests: TestFiles) -> list[Location]:
    """Source files named in the failures, when retrieval found no code outside the tests."""
    found: list[Location] = []
    for failure in report.failures:
        for path in re.findall(r"([\w./-]+\.\w+)", f"{failure.traceback}\n{failure.message}"):
            known = _known(copy, path)
            if known and not tests.is_test(known) and language_of(known) and all(f.path != known for f in found):
                found.append(Location(known, known, "module", 1, _lines(copy, known), 0.0, "named"))
    if not found:
        code = [p for p in copy.paths() if language_of(p) and not tests.is_test(p)]
        if len(code) <= 3:  # a tiny project: its source files are the candidates
            found = [Location(p, p, "module", 1, _lines(copy, p), 0.0, "only source") for p in code]
    return found


# -- prompts --------------------------------------------------------------------------------------


def render_failures(report: TestReport) -> str:
    """The failing tests, trimmed: a few, each with the end of its traceback."""
    parts = [f"{report.summary()}."]
    for failure in report.failures[:FAILURES_SHOWN]:
        lines = (failure.traceback or failure.message).strip().splitlines()
        if len(lines) > TRACEBACK_LINES:
            lines = ["...", *lines[-TRACEBACK_LINES:]]
        message = failure.message.strip().splitlines()[:3]
        parts.append(f"### {failure.test_id}\n" + "\n".join(message) + "\n```\n" + "\n".join(lines) + "\n```")
    if len(report.failures) > FAILURES_SHOWN:
        parts.append(f"... and {len(report.failures) - FAILURES_SHOWN} more failing tests.")
    return "\n\n".join(parts)


_FRAME = re.compile(r'^([\w./-]+\.\w+):(\d+):|File "([^"]+)", line (\d+)', re.M)


def _test_definitions(index: RepoIndex, report: TestReport, tests: TestFiles) -> list[Definition]:
    """The failing tests' own definitions (the test and the test helpers its traceback passes)."""
    found: list[Definition] = []
    for failure in report.failures[:FAILURES_SHOWN]:
        places = [(failure.file, failure.line)] if failure.file and failure.line else []
        for m in _FRAME.finditer(failure.traceback):
            places.append((m.group(1) or m.group(3), int(m.group(2) or m.group(4))))
        for path, line in places:
            path = _indexed(index, path)
            if not path or not tests.is_test(path) or len(found) >= FAILURES_SHOWN:
                continue
            definition = index.enclosing(path, line)
            if definition is not None and all(d.key != definition.key for d in found):
                found.append(definition)
    return found


def failing_test_targets(index: RepoIndex, report: TestReport, tests: TestFiles) -> list[Target]:
    """The failing test functions, as targets of the test route (`ladder`)."""
    return [Target(d.path, d.symbol, d.kind, d.start_line, d.end_line)
            for d in _test_definitions(index, report, tests) if d.kind in ("function", "method")]


def spec_text(index: RepoIndex, report: TestReport, tests: TestFiles) -> str:
    """The failing tests' own code, as the spec (or, when they may change, as tests that may be wrong)."""
    blocks: list[str] = []
    for definition in _test_definitions(index, report, tests):
        rows = index.lines(definition.path)[definition.start_line - 1 : definition.end_line]
        if len(rows) > SPEC_LINES:
            rows = [*rows[: SPEC_LINES - 1], "    ..."]
        fence = language_of(definition.path) or ""
        blocks.append(f"`{definition.symbol}` in `{definition.path}`:\n```{fence}\n" + "\n".join(rows) + "\n```")
    if not blocks:
        return ""
    heading = ("The tests (written with the code: where they disagree, either may be wrong)" if tests.writable
               else "The tests (the specification: they are right and stay as they are)")
    return f"\n## {heading}\n" + "\n".join(blocks) + "\n"


def _indexed(index: RepoIndex, path: str | None) -> str:
    """The index's path for a path from a report (relative, or absolute inside the sandbox)."""
    if not path:
        return ""
    path = path.lstrip("./")
    if path in index:
        return path
    return next((known for known in index.paths if path.endswith("/" + known)), "")


def related_text(index: RepoIndex, target: Target, tests: TestFiles) -> str:
    """Signatures of what the function calls and of what calls it (outside the tests)."""
    own = next((d for d in index.definitions(target.path)
                if d.symbol == target.symbol and d.start_line == target.start_line), None)
    calls: list[str] = []
    if own is not None:
        for name in own.refs:
            for d in index.named(name)[:1]:
                if d.key != own.key and not tests.is_test(d.path):
                    calls.append(f"- {d.signature}  ({d.path}:{d.start_line})")
    callers = [f"- {d.signature}  ({d.path}:{d.start_line})" for d in index.referrers(target.name)
               if not tests.is_test(d.path) and d.symbol != target.symbol][:4]
    out = ""
    if calls:
        out += "\nIt calls:\n" + "\n".join(dict.fromkeys(calls[:6])) + "\n"
    if callers:
        out += "\nIt is called by:\n" + "\n".join(callers) + "\n"
    return out


def code_under_test(index: RepoIndex, target: Target, tests: TestFiles) -> str:
    """For a test target: the project code the test calls, whole (each up to CODE_UNDER_TEST_LINES)."""
    own = next((d for d in index.definitions(target.path)
                if d.symbol == target.symbol and d.start_line == target.start_line), None)
    blocks: list[str] = []
    for name in dict.fromkeys(own.calls if own is not None else ()):
        for d in index.named(name)[:1]:
            if tests.is_test(d.path) or len(blocks) >= 3:
                continue
            rows = index.lines(d.path)[d.start_line - 1 : d.end_line][:CODE_UNDER_TEST_LINES]
            blocks.append(f"`{d.symbol}` in `{d.path}`:\n```{language_of(d.path) or ''}\n" + "\n".join(rows) + "\n```")
    return "\nThe code it tests:\n" + "\n".join(blocks) + "\n" if blocks else ""


def repair_messages(
    approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
    *, template: str, workspace: Path,
) -> list[dict[str, str]]:
    """The request of one round; every candidate of the round sends exactly this (shared prefix)."""
    target = approach.target
    source = copy.read(target.path) or ""
    values = {
        "template": template, "failures": render_failures(report), "spec": spec_text(index, report, tests),
        "path": target.path, "fence": language_of(target.path) or "", "feedback": approach.feedback,
    }
    if approach.route == "function":
        rows = source.splitlines()[target.start_line - 1 : target.end_line]
        related = code_under_test(index, target, tests) if approach.test else related_text(index, target, tests)
        values |= {"symbol": target.symbol, "func": target.name, "start": str(target.start_line),
                   "end": str(target.end_line), "code": "\n".join(rows), "related": related}
        if approach.test:
            values["spec"] = ""  # the test is the code shown
        task = "repair_task_test" if approach.test else "repair_task_anew" if approach.anew else "repair_task_fix"
        values["task"] = render_prompt(task, workspace, **values)
        user = render_prompt("repair_function", workspace, **values)
    else:
        values["code"] = source.rstrip("\n")
        name = "oneshot" if approach.bare else "repair_file" if approach.route == "file" else "repair_blocks"
        user = render_prompt(name, workspace, **values)
    return [{"role": "system", "content": render_prompt("system", workspace)}, {"role": "user", "content": user}]


def prompt_hash(messages: list[dict[str, str]]) -> str:
    text = "\n".join(f"{m['role']}:{m['content']}" for m in messages)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_reply(approach: Approach, copy: WorkingCopy, reply: str) -> DebugPlan:
    """The reply as a DebugPlan of edits/writes; ReplyRejected says why there is none."""
    target = approach.target
    actions: list[Action]
    if approach.route == "function":
        try:
            actions = list(splice(copy.read(target.path) or "", target, reply))
        except Unchanged as exc:
            raise ReplyUnchanged(str(exc)) from None
        except SpliceError as exc:
            raise ReplyRejected(str(exc)) from None
        if approach.test:
            _keeps_checks(target, actions)
        return DebugPlan(diagnosis=f"`{target.symbol}` rewritten", actions=actions)
    if approach.route == "file":
        code = extract_code(reply, target.path, [p for p in copy.paths() if p != target.path])
        if code.problem:
            raise ReplyRejected(code.problem)
        return DebugPlan(diagnosis=f"{target.path} rewritten", actions=[WriteAction(path=target.path, content=code.text)])
    if approach.route == "blocks":
        edits = parse_blocks(reply, target.path)
        if not edits:
            raise ReplyRejected("the reply holds no SEARCH/REPLACE block")
        return DebugPlan(diagnosis="changes in several places", actions=list(edits))
    return DebugPlan(diagnosis=f"install {approach.package}", actions=[InstallAction(packages=[approach.package])])


def _keeps_checks(target: Target, actions: Sequence[Action]) -> None:
    """A test may get right expected values, never fewer checks: a test emptied to pass proves nothing."""
    before = sum(len(_CHECK.findall(a.search)) for a in actions if isinstance(a, EditAction))
    after = sum(len(_CHECK.findall(a.replace)) for a in actions if isinstance(a, EditAction))
    if after < before:
        raise ReplyRejected(f"the reply's `{target.name}` has {after} checks where the test has {before}: "
                            "correct the expected values that are wrong and keep every check")


def with_feedback(approach: Approach, feedback: str) -> Approach:
    return replace(approach, feedback=feedback)
