"""What the model is shown: failing tests as text, and the code they are about."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.prompting.shows import RequestShows
from greenloop.retrieval import (
    Location,
    RepoIndex,
    SpectrumCache,
    executed_callees,
    locate,
    pack_code,
    path_from_tests,
)
from greenloop.tokens import count_text
from greenloop_sandbox import Spectrum, TestFailure, TestReport
from greenloop_sandbox.languages import source_suffixes

MAX_FAILURES_SHOWN = 5
MAX_TRACEBACK_LINES = 60
_OBJECT = re.compile(r"<(?:function|built-in function|class) '?([\w.]+)'?(?: at 0x[0-9a-f]+)?>")
_ADDRESS = re.compile(r"(<[^<>\n]*?)(?: at 0x[0-9a-fA-F]+| id='\d+')>")


def tidy(text: str) -> str:
    """Runner output as a reader wants it, the same words from run to run: pytest's `<function f at
    0x7f...>('bye')` is `f('bye')`, and an object's address (`<pkg.C object at 0x7f...>`, a mock's
    `id='1403...'`) is left out. An address tells the model nothing and changes every run, so a prompt
    that shows one is never the same request twice (seeded replies, the bench's memo)."""
    return _ADDRESS.sub(r"\1>", _OBJECT.sub(r"\1", text))


def render_failures(report: TestReport) -> str:
    """The failing tests with their messages and (trimmed) tracebacks."""
    if not report.failures:
        return f"All tests pass ({report.summary()})."
    parts = [f"{report.summary()}."]
    for failure in report.failures[:MAX_FAILURES_SHOWN]:
        where = f" ({failure.file}:{failure.line})" if failure.file and failure.line else ""
        lines = tidy(failure.traceback or failure.message).strip().splitlines()
        if len(lines) > MAX_TRACEBACK_LINES:
            lines = [*lines[:10], "...", *lines[-(MAX_TRACEBACK_LINES - 11) :]]
        message = tidy(failure.message).strip()
        parts.append(f"### {failure.test_id}{where}\n{message}\n```\n" + "\n".join(lines) + "\n```")
    if len(report.failures) > MAX_FAILURES_SHOWN:
        parts.append(f"... and {len(report.failures) - MAX_FAILURES_SHOWN} more failing tests.")
    return "\n\n".join(parts)


def numbered(text: str, start: int = 1) -> str:
    return "".join(f"{n:5d}| {line}\n" for n, line in enumerate(text.splitlines(), start))


@dataclass
class PromptCode:
    """The code a prompt shows (`text`) and its locations: those shown first, then (roles "callee", "path"
    and "ranked") the ones a request of several defs may show too (the rung "several")."""

    text: str
    tokens: int
    locations: list[Location] = field(default_factory=list)


class PromptCodeBuilder:
    """Keeps one incremental repo index per run and turns failures into the code a prompt shows."""

    def __init__(self, *, use_retrieval: bool, budget_tokens: int, top_k: int,
                 coverage: Callable[[list[str]], Awaitable[Spectrum]] | None = None,
                 shows: RequestShows | None = None) -> None:
        self.use_retrieval = use_retrieval
        self.budget_tokens = budget_tokens
        self.top_k = top_k
        self.index = RepoIndex()
        self.spectra = SpectrumCache(coverage)  # the coverage pass (retrieval.coverage), once per run
        self.shows = shows or RequestShows()  # what a repair request shows beyond its code (`prompt.*`)

    def request_shows(self) -> RequestShows:
        """What a repair request shows now: the settings, with the lines the failing tests ran while the coverage
        pass's files are as it measured them (none otherwise)."""
        return self.shows.measured(self.spectra.current(self.index))

    async def build(self, copy: WorkingCopy, failures: Sequence[TestFailure]) -> PromptCode:
        await self.index.update(copy.files(), copy.deleted())
        spectrum = await self.spectra.get(self.index, failures)
        locations = await locate(self.index, list(failures), top_k=self.top_k, spectrum=spectrum) if failures else []
        if self.use_retrieval:
            pack = pack_code(  # the prompt shows the failures itself: the budget goes to code
                self.index, locations, budget_tokens=self.budget_tokens, failures=failures, failure_text=False
            )
            unshown = _unshown(self.index, locations, pack.locations, spectrum, [f.test_id for f in failures])
            return PromptCode(pack.text, pack.tokens, [*pack.locations, *unshown])
        text = whole_files(copy, failures)
        return PromptCode(text, count_text(text), locations)


def _unshown(index: RepoIndex, ranked: list[Location], shown: list[Location], spectrum: Spectrum | None,
             test_ids: list[str]) -> list[Location]:
    """What a request of several defs may show beyond the packed code: the executed callees of the top
    function (role "callee"), the path from the failing tests' own calls down (role "path"), then the
    ranked locations the packing left out (role "ranked")."""
    top = next((loc for loc in shown if loc.role == "target" and loc.kind in ("function", "method")), None)
    callees = executed_callees(index, top, spectrum) if top is not None else []
    keys = {loc.key for loc in shown}
    return [*callees, *path_from_tests(index, test_ids, spectrum),
            *(replace(loc, role="ranked") for loc in ranked if loc.key not in keys)]


def coverage_note(spectrum: Spectrum) -> str:
    """One line for the person on the run's coverage pass (retrieval.coverage): what ran, or why it gave nothing."""
    if not spectrum.failing:
        why = spectrum.note or "no failing test ran under it"
        return f"Coverage pass ({spectrum.seconds:.1f} s): nothing to rank with ({why}); ranked without it."
    return (f"Coverage pass: {len(spectrum.failing)} failing and {len(spectrum.passing)} passing tests ran under "
            f"coverage in {spectrum.seconds:.1f} s; the code they ran is ranked with it.")


@cache
def _path_re() -> re.Pattern[str]:
    """A source file's path in a traceback, for every language's suffixes (the longest first)."""
    suffixes = sorted((re.escape(s.lstrip(".")) for s in source_suffixes()), key=len, reverse=True)
    return re.compile(rf"([\w./-]+\.(?:{'|'.join(suffixes)}))")


def whole_files(copy: WorkingCopy, failures: Sequence[TestFailure]) -> str:
    """The 'no retrieval' baseline: every project file named in the failures, whole."""
    named: list[str] = []
    for failure in failures:
        for candidate in [failure.file or "", *_path_re().findall(failure.traceback + "\n" + failure.message)]:
            path = candidate.lstrip("./")
            for known in copy.paths():
                if known not in named and _same_file(known, path):
                    named.append(known)
    blocks = []
    for path in named:
        text = copy.read(path)
        if text is not None:
            blocks.append(f"### {path}\n{numbered(text)}")
    return "\n".join(blocks) or "(no project files are named in the failures)"


def _same_file(known: str, path: str) -> bool:
    return bool(path) and (known == path or known.endswith("/" + path) or path.endswith("/" + known))


def focus_text(copy: WorkingCopy, path: str, start: int, end: int, margin: int = 15) -> str:
    """The lines a person pointed at (marked) with some surrounding lines, numbered."""
    text = copy.read(path)
    if text is None:
        return f"({path} is not a text file in the workspace)"
    lines = text.splitlines()
    lo, hi = max(1, start - margin), min(len(lines), end + margin)
    out = [f"### {path} (lines {start}-{end} are the ones the person means, marked with >)"]
    for n in range(lo, hi + 1):
        mark = ">" if start <= n <= end else " "
        out.append(f"{mark}{n:4d}| {lines[n - 1]}")
    return "\n".join(out) + "\n"
