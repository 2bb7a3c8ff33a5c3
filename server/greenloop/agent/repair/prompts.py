"""The request of one round: the failing output trimmed, the tests (as the spec), the target and its neighbours.

Every candidate of a round sends exactly these messages, so the model server reads the prompt
once (its prefix cache). A function target shows the function with its line numbers and the
signatures of what it calls (with their first doc lines) and what calls it; a test target (tests
written with the code) shows the test and the code it tests. Each failure's failed comparison is said
in words under it, and the lines of a shown function the failing tests ran are listed under its code
(each by its `prompt.*` setting: docs/decisions/2026-12-informed-requests.md).
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.prompting.compared import compared
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.material import tidy
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.check_statements import Check
from greenloop.agent.repair.kept_note import kept_note
from greenloop.agent.repair.places import frames, known_path
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Definition, RepoIndex, language_of
from greenloop.retrieval.docstrings import doc_summary
from greenloop.retrieval.graph import resolve
from greenloop_sandbox import TestReport

FAILURES_SHOWN = 3
TRACEBACK_LINES = 30
SPEC_LINES = 40
CALLEES_SHOWN = 6  # the callees listed under the function ("It calls:")
CODE_UNDER_TEST_LINES = 60  # a test target shows the code the test calls, each definition up to this long


def render_failures(report: TestReport, *, in_words: bool = True) -> str:
    """The failing tests, trimmed: a few, each with the end of its traceback (and, `in_words`, its failed
    comparison said in words: prompt.expected_actual)."""
    parts = [f"{report.summary()}."]
    for failure in report.failures[:FAILURES_SHOWN]:
        lines = tidy(failure.traceback or failure.message).strip().splitlines()
        if len(lines) > TRACEBACK_LINES:
            lines = ["...", *lines[-TRACEBACK_LINES:]]
        message = tidy(failure.message).strip().splitlines()[:3]
        said = compared(failure.message, failure.traceback) if in_words else ""
        parts.append(f"### {failure.test_id}\n" + "\n".join(message) + "\n```\n" + "\n".join(lines) + "\n```"
                     + (f"\nThat is: {said}" if said else ""))
    if len(report.failures) > FAILURES_SHOWN:
        parts.append(f"... and {len(report.failures) - FAILURES_SHOWN} more failing tests.")
    return "\n\n".join(parts)


# python's "cannot import name 'X' from 'm'", node's "module './m.js' does not provide an export named 'X'"
_MISSING_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'|"
                             r"module '([^']+)' does not provide an export named '(\w+)'|"
                             r"module '(?P<owner>[\w.]+)' has no attribute '(?P<attribute>\w+)'")


def _test_definitions(index: RepoIndex, report: TestReport, tests: TestFiles) -> list[Definition]:
    """The failing tests' own definitions (the test and the test helpers its traceback passes)."""
    found: list[Definition] = []
    for failure in report.failures[:FAILURES_SHOWN]:
        places = [(failure.file, failure.line)] if failure.file and failure.line else []
        for path, line in [*places, *frames(failure.traceback)]:
            path = known_path(index.paths, path)
            if not path or not tests.is_test(path) or len(found) >= FAILURES_SHOWN:
                continue
            definition = index.enclosing(path, line)
            if definition is not None and all(d.key != definition.key for d in found):
                found.append(definition)
    return found


def failing_test_targets(index: RepoIndex, report: TestReport, tests: TestFiles) -> list[Target]:
    """The failing test functions, as targets of the test route (`ladder`)."""
    return [Target(d.path, d.symbol, d.kind, d.start_line, d.end_line)
            for d in _test_definitions(index, report, tests) if d.kind in ("function", "method") and d.path not in tests.spec]


def spec_text(index: RepoIndex, report: TestReport, tests: TestFiles) -> str:
    """The failing tests' own code, as the spec (or, when they may change, as tests that may be wrong)."""
    blocks: list[str] = []
    accepted: list[str] = []  # the acceptance tests' (TestFiles.spec): right even where the others may change
    for definition in _test_definitions(index, report, tests):
        rows = index.lines(definition.path)[definition.start_line - 1 : definition.end_line]
        if len(rows) > SPEC_LINES:
            rows = [*rows[: SPEC_LINES - 1], "    ..."]
        fence = language_of(definition.path) or ""
        block = f"`{definition.symbol}` in `{definition.path}`:\n```{fence}\n" + "\n".join(rows) + "\n```"
        (accepted if definition.path in tests.spec else blocks).append(block)
    heading = ("The tests (written with the code: where they disagree, either may be wrong)" if tests.writable
               else "The tests (the specification: they are right and stay as they are)")
    text = f"\n## {heading}\n" + "\n".join(blocks) + "\n" if blocks else ""
    if accepted:
        text = ("\n## The acceptance tests (the request's own examples: they are right and stay as they are)\n"
                + "\n".join(accepted) + "\n" + text)
    return text


def related_text(index: RepoIndex, target: Target, tests: TestFiles, *, docs: bool = True) -> str:
    """Signatures of what the function calls (with, `docs`, each one's first doc lines: prompt.callee_docs) and
    of what calls it (outside the tests)."""
    own = next((d for d in index.definitions(target.path)
                if d.symbol == target.symbol and d.start_line == target.start_line), None)
    calls: dict[str, Definition] = {}  # the line -> its def, the first CALLEES_SHOWN calls' (a def called twice once)
    if own is not None:
        found = [d for name in own.refs for d in resolve(index, name, own, strict=True)[:1] if not tests.is_test(d.path)]
        calls = {f"- {d.signature}  ({d.path}:{d.start_line})": d for d in found[:CALLEES_SHOWN]}
    callers = [f"- {d.signature}  ({d.path}:{d.start_line})" for d in index.referrers(target.name)
               if not tests.is_test(d.path) and d.symbol != target.symbol][:4]
    out = ""
    if calls:
        out += "\nIt calls:\n" + "\n".join(_with_doc(line, d, index) if docs else line for line, d in calls.items()) + "\n"
    if callers:
        out += "\nIt is called by:\n" + "\n".join(callers) + "\n"
    return out


def _with_doc(line: str, definition: Definition, index: RepoIndex) -> str:
    doc = doc_summary(index, definition)
    return f"{line}\n  {doc}" if doc else line


def code_under_test(index: RepoIndex, targets: Sequence[Target], tests: TestFiles) -> str:
    """For test targets: the project code the tests call, whole (at most 3, each up to CODE_UNDER_TEST_LINES)."""
    calls: dict[str, Definition] = {}  # name -> the test that calls it
    for target in targets:
        own = next((d for d in index.definitions(target.path)
                    if d.symbol == target.symbol and d.start_line == target.start_line), None)
        calls |= {name: own for name in own.calls if name not in calls} if own is not None else {}
    blocks: list[str] = []
    for name, caller in calls.items():
        for d in resolve(index, name, caller, strict=True)[:1]:
            if tests.is_test(d.path) or len(blocks) >= 3:
                continue
            rows = index.lines(d.path)[d.start_line - 1 : d.end_line][:CODE_UNDER_TEST_LINES]
            blocks.append(f"`{d.symbol}` in `{d.path}`:\n```{language_of(d.path) or ''}\n" + "\n".join(rows) + "\n```")
    return "\nThe code it tests:\n" + "\n".join(blocks) + "\n" if blocks else ""


TRUST_SPEC = "The tests are right: do not change them."
# generation's own tests: the rungs for the checks decide which side is wrong; a code rung changes the code
TRUST_WRITABLE = "The tests were written with the code; change only the code here."


def repair_messages(
    approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
    *, template: str, workspace: Path, shows: RequestShows | None = None,
) -> list[dict[str, str]]:
    """The request of one round; every candidate of the round sends exactly this (shared prefix). `shows`: what it
    shows beyond the code (settings `prompt.*`, the lines the failing tests ran); all but the ran lines by default."""
    shows = shows or RequestShows()
    target = approach.target
    hints = where_defined(index, report, tests)
    values = {
        "template": template, "failures": render_failures(report, in_words=shows.expected_actual) + hints,
        "hints": hints,
        "spec": spec_text(index, report, tests),
        "path": target.path, "fence": language_of(target.path) or "",
        "feedback": kept_note([t.path for t in (target, *approach.also)], copy, tests) + approach.feedback,
        "trust": TRUST_WRITABLE if tests.writable else TRUST_SPEC,
    }
    user = approach.form.prompt(approach, copy, index, report, tests, values, workspace, shows=shows)
    return [{"role": "system", "content": render_prompt("system", workspace)}, {"role": "user", "content": user}]


def checks_text(checks: Sequence[Check], path: str) -> str:
    """Each failing check: its test, its lines, and what the failure said (what the code gave); `path`: the
    first check's file (its language fences the code)."""
    fence = language_of(path) or ""
    parts = []
    for number, check in enumerate(checks, 1):
        case = (f"\n(an entry of the test's `parametrize` list ({', '.join(check.names)}), for "
                f"`{' '.join(check.via.split())}`: correct the entry)") if check.via else ""
        parts.append(f"{number}. `{check.test}` in `{check.path}`, line {check.start_line}:\n```{fence}\n"
                     f"{textwrap.dedent(check.text)}\n```{case}\nIt failed with:\n```\n{tidy(check.message)}\n```"
                     f"{_values(check)}")
    return "\n".join(parts)


def _values(check: Check) -> str:
    """The comparison in words, when pytest showed it: which side the code gave and which the check expects."""
    said = compared(check.message, who="the check")
    return f"\nThat is: {said}" if said else ""


def where_defined(index: RepoIndex, report: TestReport, tests: TestFiles) -> str:
    """For a name a failure says a module does not have (imported from it, or read off it): where the project
    defines it."""
    notes: list[str] = []
    for failure in report.failures:
        for match in _MISSING_IMPORT.finditer(f"{failure.message}\n{failure.traceback}"):
            name = match.group(1) or match.group(4) or match["attribute"]
            module = match.group(2) or match.group(3) or match["owner"]
            found = [d for d in index.named(name) if not tests.is_test(d.path) and d.name == name][:2]
            if not found and match["attribute"]:
                continue  # an attribute read off any module (a package's too): said only when the project has it
            places = " and ".join(f"`{d.path}` (line {d.start_line})" for d in found)
            note = (f"`{name}` is not in `{module}`; it is defined in {places}." if places
                    else f"`{name}` is not defined anywhere in the project.")
            if note not in notes:
                notes.append(note)
    return "\n" + "\n".join(notes) + "\n" if notes else ""


def prompt_hash(messages: list[dict[str, str]]) -> str:
    text = "\n".join(f"{m['role']}:{m['content']}" for m in messages)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
