"""Which way a round asks for a fix: the route (function, file, blocks, install) and its target; a reply -> plan.

The common case is a function: the model sees that function, the failing output and the
tests as the spec (prompts.py), and writes the function again as plain code. A module the code imports
that is not installed is an `install`; code that does not load is a whole-file repair. When a
round brings nothing better the next one changes one thing (`ladder`), until the ladder is spent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Literal

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import Action, DebugPlan, EditAction, InstallAction, WriteAction
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.repair.blocks import parse_blocks
from greenloop.agent.repair.checks import CHECK, DEFINITIONS_ONLY, Check, splice_checks
from greenloop.agent.repair.places import known_path
from greenloop.agent.repair.properties import property_reply
from greenloop.agent.repair.salvage import rewritten_code
from greenloop.agent.repair.splice import SpliceError, Target, Unchanged, splice
from greenloop.retrieval import Location, language_of
from greenloop.retrieval.index import is_test_path
from greenloop_sandbox import TestReport
from greenloop_sandbox.languages import languages
from greenloop_sandbox.packages import package_name

Route = Literal["function", "file", "blocks", "install", "checks", "mutants"]
_METHOD = re.compile(r"^\s+(?:async\s+)?def\s")
FILE_ROUTE_LINES = 400  # longer files are not asked for whole
_BROKEN = ("SyntaxError", "IndentationError", "ImportError", "NameError: name", "TabError")


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
    declared: tuple[str, ...] = ()  # the install route's first candidate installs these too (declared.py)
    feedback: str = ""  # what an earlier attempt gave, said to the model
    bare: bool = False  # the one-shot baseline's bare prompt: failures and the file, nothing else
    anew: bool = False  # the function written again from the tests rather than patched
    test: bool = False  # the target is a failing test written in this run: its expected values may be wrong
    checks: tuple[Check, ...] = ()  # the checks route's statements, where the failing tests stopped
    given: str = ""  # a reply known before the round (settle.py): its first candidate, asked of no model
    replies: tuple[str, ...] = ()  # the mutants route's candidates (mutants.py), asked of no model
    kinds: tuple[str, ...] = ()  # the kind of each of `replies` (risk.py)

    def kind_of(self, index: int) -> str:
        """What kind of change this round's `index`-th candidate (from 1) is: a small edit's kind, else a
        model's reply (or an install, or rewritten checks)."""
        if self.route == "mutants":
            return self.kinds[index - 1] if 0 < index <= len(self.kinds) else "small edit"
        return self.route if self.route in ("install", "checks") else "model"

    @property
    def label(self) -> str:
        if self.route == "install":
            return f"install {self.package}" + (f" and the {len(self.declared)} declared" if self.declared else "")
        if self.route == "function":
            return f"`{self.target.symbol}` in {self.target.path}"
        if self.route == "mutants":
            return f"small edits of `{self.target.symbol}` in {self.target.path}"
        if self.route == "checks":
            return f"checks in {', '.join(dict.fromkeys(c.path for c in self.checks))} ({len(self.checks)} failing)"
        return f"{self.route} {self.target.path}"


def ladder(
    locations: list[Location], report: TestReport, copy: WorkingCopy, tests: TestFiles, *, oneshot: bool = False,
    failing_tests: Sequence[Target] = (), checks: Sequence[Check] = (), declared: Sequence[str] = (),
) -> list[Approach]:
    """The approaches for this state, in order: a round that brings nothing better moves one step on.

    When the tests may change (`tests.writable`: generation's own tests, `loop.edit_tests`), the
    failing tests are a rung of their own right after the first: a test written in the same run
    as the code is as likely to expect a wrong value as the code is to compute one. That rung asks
    about the statements the tests stopped at (`checks`), or, when none was found, the first
    failing test (or its file) whole. A missing python module is installed with the project's
    `declared` requirements (declared.py).
    """
    sources = [loc for loc in locations if not tests.is_test(loc.path) and copy.read(loc.path) is not None]
    if not sources:
        sources = _imported_sources(report, copy, tests)
    if oneshot:
        return [replace(_file(sources[0].path, "the whole file, once (baseline)"), bare=True)] if sources else []
    steps: list[Approach] = []
    missing, package, language = _missing_module(report, copy)
    if missing:
        also = tuple(p for p in declared if package_name(p) != package_name(package)) if language == "python" else ()
        steps.append(Approach("install", Target("", missing, "module", 0, 0), "a module is not installed",
                              package=package, declared=also))
    broken = _broken_file(report, copy, tests)
    if broken:
        steps.append(_file(broken, "the code does not load"))
    made, known = property_reply(report, copy, tests.is_test)
    if known:  # `<bound method A.b of ...>` compared: the change is known, its round's first candidate
        steps.append(Approach("blocks", Target(made, made, "file", 1, _lines(copy, made)),
                              "methods the tests read as attributes, made properties", given=known))
    functions = [loc for loc in sources if loc.kind in ("function", "method") or _fields_only(copy, loc)]
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
    if tests.writable and checks:
        steps.insert(min(1, len(steps)), _checks_rung(checks))
    elif tests.writable and failing_tests:
        at = next((i + 1 for i, s in enumerate(steps) if s.route == "function"), len(steps))
        steps.insert(at, _test_rung(failing_tests[0], report, copy))
    return steps


def _checks_rung(checks: Sequence[Check]) -> Approach:
    """The statements the failing tests stopped at (all asked in one round; the target names the first's file)."""
    first = checks[0]
    target = Target(first.path, first.path, "checks", first.start_line, first.end_line)
    return Approach("checks", target, "the failing checks: written with the code, what they expect may be wrong",
                    test=True, checks=tuple(checks))


def given_rung(checks: Sequence[Check], given: str) -> Approach:
    """The checks route with its one candidate known (settle.py: the checks the request sided against, rewritten)."""
    return replace(_checks_rung(checks), given=given,
                   why="the request sides with the code: the checks rewritten to expect what it gave")


def _test_rung(test: Target, report: TestReport, copy: WorkingCopy) -> Approach:
    """The first failing test, or its whole file when more of its tests fail (one round corrects them all)."""
    failing = sum(1 for f in report.failures if (f.file or f.test_id.split("::", 1)[0]) == test.path)
    if failing > 1 and _lines(copy, test.path) <= FILE_ROUTE_LINES:
        return Approach("file", Target(test.path, test.path, "file", 1, 0),
                        f"the failing tests' file ({failing} fail): written with the code, their expected values "
                        "may be wrong", test=True)
    return Approach("function", test, "the failing test: written with the code, its expected values may be wrong",
                    test=True)


def stood_by_key(target: Target) -> str:
    return f"{target.path}::{target.symbol}"


def _file(path: str, why: str) -> Approach:
    return Approach("file", Target(path, path, "file", 1, 0), why)


def _target(loc: Location) -> Target:
    return Target(loc.path, loc.symbol, loc.kind, loc.start_line, loc.end_line)


def _fields_only(copy: WorkingCopy, loc: Location) -> bool:
    """A python class with no methods of its own (a dataclass, a named tuple, an enum): its
    constructor is its fields, so the class itself is the unit to rewrite, not another class's method."""
    if loc.kind != "class" or not loc.path.endswith((".py", ".pyi")):
        return False
    rows = (copy.read(loc.path) or "").splitlines()[loc.start_line : loc.end_line]
    return not any(_METHOD.match(row) for row in rows)


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


def _missing_module(report: TestReport, copy: WorkingCopy) -> tuple[str, str, str]:
    """(module, package, language) for the first module a failure says is not installed (by its
    language's message) and the project does not hold itself, or for a test fixture that a known
    test-runner plugin gives (pytest's `fixture 'mocker' not found` -> pytest-mock); ("", "", "")
    when there is none."""
    own = _own_modules(copy)
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        for language in languages():
            match = re.search(language.missing_module, text) if language.missing_module else None
            module = match.group(1).split(".")[0] if match else ""
            if module and module not in own:
                return module, language.package_for(module), language.name
            fixture = re.search(language.missing_fixture, text) if language.missing_fixture else None
            if fixture and (plugin := language.fixtures.get(fixture.group(1))):
                return fixture.group(1), plugin, language.name
    return "", "", ""


def _broken_file(report: TestReport, copy: WorkingCopy, tests: TestFiles) -> str:
    """A source file named in a failure that says the code does not load (syntax, import, name errors)."""
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        if not any(word in text for word in _BROKEN):
            continue
        for path in reversed(re.findall(r"([\w./-]+\.\w+)", text)):
            known = known_path(copy.paths(), path)
            if known and not tests.is_test(known) and language_of(known):
                return known
    return ""


def _imported_sources(report: TestReport, copy: WorkingCopy, tests: TestFiles) -> list[Location]:
    """Source files named in the failures, when retrieval found no code outside the tests."""
    found: list[Location] = []
    for failure in report.failures:
        for path in re.findall(r"([\w./-]+\.\w+)", f"{failure.traceback}\n{failure.message}"):
            known = known_path(copy.paths(), path)
            if known and not tests.is_test(known) and language_of(known) and all(f.path != known for f in found):
                found.append(Location(known, known, "module", 1, _lines(copy, known), 0.0, "named"))
    if not found:
        code = [p for p in copy.paths() if language_of(p) and not tests.is_test(p)]
        if len(code) <= 3:  # a tiny project: its source files are the candidates
            found = [Location(p, p, "module", 1, _lines(copy, p), 0.0, "only source") for p in code]
    return found


def read_reply(
    approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool] = is_test_path
) -> DebugPlan:
    """The reply as a DebugPlan of edits/writes; ReplyRejected says why there is none.

    A checks reply that rewrote the code under test instead is that code's candidate (salvage.py).
    """
    target = approach.target
    actions: list[Action]
    if approach.route in ("function", "mutants"):
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
        if code.text.rstrip() == (copy.read(target.path) or "").rstrip():
            raise ReplyUnchanged(f"the reply's `{target.path}` is the file as it is: it changes nothing")
        if approach.test:
            _keeps_checks(target, [EditAction(path=target.path, search=copy.read(target.path) or "",
                                              replace=code.text)])
        return DebugPlan(diagnosis=f"{target.path} rewritten", actions=[WriteAction(path=target.path, content=code.text)])
    if approach.route == "checks":
        try:
            files = {c.path: copy.read(c.path) or "" for c in approach.checks}
            edits = splice_checks(approach.checks, files, reply)
        except Unchanged as exc:
            raise ReplyUnchanged(str(exc)) from None
        except SpliceError as exc:
            salvaged = rewritten_code(copy, reply, target.path, is_test) if str(exc) == DEFINITIONS_ONLY else []
            if not salvaged:
                raise ReplyRejected(str(exc)) from None
            return DebugPlan(diagnosis="the reply rewrote the code, not the checks", actions=list(salvaged))
        return DebugPlan(diagnosis="the failing checks corrected", actions=list(edits))
    if approach.route == "blocks":
        edits = parse_blocks(reply, target.path)
        if not edits:
            raise ReplyRejected("the reply holds no SEARCH/REPLACE block")
        return DebugPlan(diagnosis="changes in several places", actions=list(edits))
    packages = [approach.package, *approach.declared]
    return DebugPlan(diagnosis=f"install {' '.join(packages)}", actions=[InstallAction(packages=packages)])


def _keeps_checks(target: Target, actions: Sequence[Action]) -> None:
    """A test may get right expected values, never fewer checks: a test emptied to pass proves nothing."""
    before = sum(len(CHECK.findall(a.search)) for a in actions if isinstance(a, EditAction))
    after = sum(len(CHECK.findall(a.replace)) for a in actions if isinstance(a, EditAction))
    if after < before:
        what = target.path if target.kind == "file" else target.name
        raise ReplyRejected(f"the reply's `{what}` has {after} checks where the tests have {before}: "
                            "correct the expected values that are wrong and keep every check")


def with_feedback(approach: Approach, feedback: str) -> Approach:
    return replace(approach, feedback=feedback)
