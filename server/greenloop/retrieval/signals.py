"""Evidence signals per candidate definition for one set of failures (each signal in [0, 1]).

`collect` returns, for every definition some evidence points at, the value of
each signal and a note saying where it came from; `rank.py` weighs and sums
them. Test code is collected apart (`Evidence.spec`): it is the spec, never
the target. The signals of one failure come from `frame_signals.py`,
`call_signals.py`, `value_signals.py` and `lexical_signals.py`; those over all failures (`spread`),
per file (`module`) and the `size` prior are here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from greenloop.retrieval.call_signals import (
    apply_delegation,
    offer_callees,
    offer_message_names,
    offer_test_names,
    own_lines,
)
from greenloop.retrieval.candidates import Candidate, Evidence
from greenloop.retrieval.evidence import Specificity, TestUse, failing_tests, test_use
from greenloop.retrieval.failures import Failure
from greenloop.retrieval.frame_signals import failing_source_line, offer_frames
from greenloop.retrieval.frames import parse_frames
from greenloop.retrieval.graph import module_name
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.lexical_signals import lexical_index, neighbourhood, offer_bm25, offer_names_like
from greenloop.retrieval.model import Frame
from greenloop.retrieval.value_signals import offer_writers

# a test that hung: pytest-timeout, faulthandler's dump, node's and cargo's own words
_HUNG = re.compile(r"Failed: Timeout \(?>|\+{3,} Timeout \+{3,}|Timeout \(0:|test timed out|has been running for over")
# the test named something the code does not have (yet): python, then node
_MISSING_NAME = re.compile(
    r"(?:AttributeError|ImportError|NameError): .*(?:has no attribute|cannot import name|is not defined)"
    r"|(?:TypeError|ReferenceError): .*is not (?:a function|a constructor|defined)"
    r"|does not provide an export named"
)


def collect(index: RepoIndex, failures: Sequence[Failure]) -> Evidence:
    """Every failure's evidence, averaged over the failures (plus the cross-failure `spread`)."""
    specificity = index.derived("specificity", lambda: Specificity(index))
    evidence = Evidence(specificity=specificity, failures=len(failures))
    paths = index.paths
    in_traceback = evidence.in_traceback
    for failure in failures:
        one = Evidence(specificity=specificity)
        frames = parse_frames(failure.text, paths)
        if failure.file and failure.line and failure.file in index:
            frames.append(Frame(failure.file, failure.line, None))
        tests = failing_tests(index, failure.test_id, failure.file, frames)
        for test in tests:
            one.add_spec(test, f"the failing test {failure.test_id or test.symbol}".strip())
        framed = offer_frames(index, frames, one, hung=_HUNG.search(failure.text) is not None)
        offer_writers(index, frames, failure.text, one)
        for key in {d.key for d, _ in framed}:
            in_traceback[key] = in_traceback.get(key, 0) + 1
        if not framed and _MISSING_NAME.search(failure.text):
            evidence.missing_name += 1
        test_files = {t.path for t in tests} | {f.path for f in frames if is_test_path(f.path)}
        use = test_use(index, tests, failure.text, test_files, failing_source_line(index, frames))
        called = offer_test_names(index, tests, sorted(test_files), use, one)
        offer_callees(index, [*framed, *called], one)
        apply_delegation(index, called, one)
        offer_message_names(index, use, one)
        seeds = {f.path for f in frames} | test_files | set(use.modules) | {d.path for d, _ in called}
        lexical = lexical_index(index, neighbourhood(index, seeds) or set(index.paths))
        offer_bm25(lexical, failure, one)
        offer_names_like(index, lexical, tests, use, one)
        _modules(use, one, evidence, 1.0 / len(failures))
        _merge(evidence, one, 1.0 / len(failures))
    _spread(evidence, in_traceback, len(failures))
    sizes(index, evidence)
    return evidence


def _merge(total: Evidence, one: Evidence, share: float) -> None:
    """Add one failure's evidence: `values` become the mean over failures (a hub that every failure
    runs outweighs each failure's own module); the note is the strongest failure's."""
    for key, item in one.spec.items():
        total.spec.setdefault(key, item)
    for key, candidate in one.candidates.items():
        into = total.candidates.get(key)
        if into is None:
            into = Candidate(candidate.definition, candidate.path, candidate.start, candidate.end)
            total.candidates[key] = into
        for signal, value in candidate.values.items():
            if value > into.peaks.get(signal, 0.0):
                into.peaks[signal] = value
                into.notes[signal] = candidate.notes[signal]
            into.values[signal] = into.values.get(signal, 0.0) + value * share


def _spread(evidence: Evidence, in_traceback: dict[str, int], failures: int) -> None:
    """Ochiai over tracebacks: failures that run a definition / sqrt(failures x test files reaching it).

    A hub in one traceback of one failing test is weak; a hub in the traceback
    of every failure, across test files, is where they break.
    """
    specificity = evidence.specificity
    for key, count in in_traceback.items():
        candidate = evidence.candidates.get(key)
        if candidate is None or candidate.definition is None or specificity is None:
            continue
        reach = max(count, specificity.reached_by(candidate.definition.name), 1)
        note = f"in the traceback of {count} of {failures} failures, reached by {reach} test files"
        candidate.offer("spread", count / math.sqrt(failures * reach), note)


def sizes(index: RepoIndex, evidence: Evidence) -> None:
    """A prior: longer code holds more bugs (log of its own line count, nested code left out; 1.0 at 200)."""
    for candidate in evidence.candidates.values():
        if candidate.definition is not None:
            lines = own_lines(index, candidate.definition)
            candidate.offer("size", min(1.0, math.log1p(lines) / math.log1p(200)), f"{lines} lines")


def late_modules(evidence: Evidence) -> None:
    """The module-under-test evidence for what was found after `collect` (by the coverage pass)."""
    for candidate in evidence.candidates.values():
        if "module" not in candidate.values and candidate.path in evidence.modules:
            candidate.offer("module", *evidence.modules[candidate.path])


def _modules(use: TestUse, evidence: Evidence, total: Evidence, share: float) -> None:
    """The module under test: named like the test file (1.0), or imported by it (0.5 x the module's specificity).

    `total` keeps each path's value (its mean over the failures), for code only the coverage pass finds later.
    """
    values = _module_values(use, evidence.specificity)
    for path, (value, note) in values.items():
        old, _ = total.modules.get(path, (0.0, note))
        total.modules[path] = (old + value * share, note)
    for candidate in evidence.candidates.values():
        if candidate.path in values:
            candidate.offer("module", *values[candidate.path])


def _module_values(use: TestUse, specificity: Specificity | None) -> dict[str, tuple[float, str]]:
    out: dict[str, tuple[float, str]] = {}
    for path, weight in use.modules.items():
        if weight >= 1.0:
            out[path] = (weight, "in the module under test (named like the test file)")
        elif weight and specificity is not None:
            out[path] = (weight * specificity.of_module(module_name(path)), "in a module the test file imports")
    return out
