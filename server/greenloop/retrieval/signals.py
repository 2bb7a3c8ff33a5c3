"""Evidence signals per candidate definition for one set of failures (each signal in [0, 1]).

`collect` returns, for every definition some evidence points at, the value of
each signal and a note saying where it came from; `rank.py` weighs and sums
them. Test code is collected apart (`Evidence.spec`): it is the spec, never
the target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from greenloop.retrieval.evidence import Specificity, TestUse, failing_tests, is_test_definition, test_use
from greenloop.retrieval.failures import Failure
from greenloop.retrieval.frames import parse_frames
from greenloop.retrieval.graph import module_name, resolve
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.lexical import LexicalIndex, words
from greenloop.retrieval.lexical import build as build_lexical
from greenloop.retrieval.model import Definition, Frame, Location

_WINDOW = 8  # lines either side of a frame that has no enclosing definition
# a test that hung: pytest-timeout, faulthandler's dump, node's and cargo's own words
_HUNG = re.compile(r"Failed: Timeout \(?>|\+{3,} Timeout \+{3,}|Timeout \(0:|test timed out|has been running for over")
# the test named something the code does not have (yet): python, then node
_MISSING_NAME = re.compile(
    r"(?:AttributeError|ImportError|NameError): .*(?:has no attribute|cannot import name|is not defined)"
    r"|(?:TypeError|ReferenceError): .*is not (?:a function|a constructor|defined)"
    r"|does not provide an export named"
)
# a block that expects its body to raise (or warn): pytest, unittest
_RAISES_BLOCK = re.compile(r"^\s*(?:async\s+)?with\s+.*\b(?:raises|warns|assertRaises\w*|assertWarns\w*)\s*\(")
_RAISES_BODY = 8  # lines of its body read at most
_LOOP = re.compile(r"(?:async\s+)?(?:while|for|loop|do)\b")
_BM25_CANDIDATES = 40
_IMPORT_HOPS = 2
_CONSTRUCTORS = ("__init__", "__new__", "constructor", "new")
_TEST_WORDS = frozenset({"test", "tests"})
_NAME_LIKE_MIN = 0.4
_CLASS_SHARE = 0.3
_CONTAINER_KINDS = ("class", "impl", "interface", "module")
_TEST_SIDE = ("test_calls", "failing_line", "imported")
_DELEGATION = 0.75  # how much of a thin wrapper's test evidence its delegates take  # what a class keeps of the evidence for it (its constructor gets the rest)


@dataclass
class Candidate:
    definition: Definition | None  # None: a line range (frame outside any definition)
    path: str
    start: int
    end: int
    values: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    peaks: dict[str, float] = field(default_factory=dict)  # best value in any one failure

    def offer(self, signal: str, value: float, note: str) -> None:
        if value > self.values.get(signal, 0.0):
            self.values[signal] = value
            self.notes[signal] = note


@dataclass
class Evidence:
    candidates: dict[str, Candidate] = field(default_factory=dict)
    spec: dict[str, Location] = field(default_factory=dict)  # test code (role "spec"), first reason kept
    specificity: Specificity | None = None
    in_traceback: dict[str, int] = field(default_factory=dict)  # definition key -> failures whose traceback ran it
    failures: int = 0
    missing_name: int = 0  # failures that stopped in test code on a name the code does not have yet
    modules: dict[str, tuple[float, str]] = field(default_factory=dict)  # path -> its `module` value, note

    def offer(self, definition: Definition, signal: str, value: float, note: str) -> None:
        if is_test_definition(definition):
            self.add_spec(definition, note)
            return
        candidate = self.candidates.get(definition.key)
        if candidate is None:
            candidate = Candidate(definition, definition.path, definition.start_line, definition.end_line)
            self.candidates[definition.key] = candidate
        candidate.offer(signal, value, note)

    def add_spec(self, definition: Definition, note: str) -> None:
        if definition.kind in _CONTAINER_KINDS and any(
            s.path == definition.path and definition.start_line <= s.start_line <= definition.end_line
            for s in self.spec.values()
        ):
            return  # a Rust `mod tests` or a test class: its failing test is already there
        self.spec.setdefault(definition.key, Location(
            definition.path, definition.symbol, definition.kind, definition.start_line, definition.end_line,
            0.0, note, role="spec",
        ))

    def offer_lines(self, path: str, start: int, end: int, signal: str, value: float, note: str) -> None:
        key = f"{path}:{start}-{end}"
        if is_test_path(path):
            self.spec.setdefault(key, Location(path, key, "lines", start, end, 0.0, note, role="spec"))
            return
        candidate = self.candidates.setdefault(key, Candidate(None, path, start, end))
        candidate.offer(signal, value, note)


def lexical_index(index: RepoIndex, paths: Collection[str]) -> LexicalIndex:
    """BM25 over the non-test definitions of `paths` in this index version (memoized per path set)."""
    chosen = tuple(sorted(paths))

    def make() -> LexicalIndex:
        files = [s for s in (index.symbols(p) for p in chosen) if s is not None and s.definitions]
        return build_lexical(files, index.lines, lambda d: not is_test_definition(d))

    return index.derived(f"lexical:{hash(chosen)}", make)


def neighbourhood(index: RepoIndex, seeds: Collection[str]) -> set[str]:
    """The files near a failure: its traceback, test and module-under-test files, and what they
    import, `_IMPORT_HOPS` hops on. Lexical evidence looks only here: the whole of a large repo
    costs seconds per change and mostly adds noise."""
    by_module = index.derived("files by module", lambda: _files_by_module(index))
    found = {p for p in seeds if p in index}
    frontier = set(found)
    for _ in range(_IMPORT_HOPS):
        reached: set[str] = set()
        for path in frontier:
            symbols = index.symbols(path)
            for module in symbols.imports if symbols else ():
                reached.update(by_module.get(module.lower(), ()))
        frontier = reached - found
        found |= reached
    return found


def _files_by_module(index: RepoIndex) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in index.paths:
        symbols = index.symbols(path)
        if symbols is not None and symbols.definitions:
            out.setdefault(module_name(path).lower(), []).append(path)
    return out


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
        framed = _frames(index, frames, one, hung=_HUNG.search(failure.text) is not None)
        for key in {d.key for d, _ in framed}:
            in_traceback[key] = in_traceback.get(key, 0) + 1
        if not framed and _MISSING_NAME.search(failure.text):
            evidence.missing_name += 1
        test_files = {t.path for t in tests} | {f.path for f in frames if is_test_path(f.path)}
        use = test_use(index, tests, failure.text, test_files, _failing_source_line(index, frames))
        called = _test_names(index, tests, sorted(test_files), use, one)
        _callees(index, [*framed, *called], one)
        _delegation(index, called, one)
        _message_names(index, use, one)
        seeds = {f.path for f in frames} | test_files | set(use.modules) | {d.path for d, _ in called}
        lexical = lexical_index(index, neighbourhood(index, seeds) or set(index.paths))
        _lexical(lexical, failure, one)
        _names_like(index, lexical, tests, use, one)
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


def _frames(
    index: RepoIndex, frames: list[Frame], evidence: Evidence, *, hung: bool = False
) -> list[tuple[Definition, float]]:
    """Project frames outside test code, deepest first (1, 1/2, 1/3, ...); frames in test code are the spec.

    In a test that hung, the deepest frame is wherever the clock ran out, most often a callee that
    returns normally; the loop that never ends is in the deepest frame that stands in a loop, so
    that frame counts as the deepest.
    """
    framed: list[tuple[Definition, float]] = []
    project = [f for f in frames if not is_test_path(f.path)]
    looping = next((f for f in project if _in_loop(index, f)), None) if hung else None
    if looping is not None:
        project = [looping, *(f for f in project if f is not looping)]
    for depth, frame in enumerate(project):
        where = f"{frame.path}:{frame.line}"
        note = f"deepest project frame ({where})" if depth == 0 else f"traceback frame {depth + 1} ({where})"
        if frame is looping:
            note = f"the loop the hung test was in ({where})"
        value = 1.0 / (1 + depth)
        definition = index.enclosing(frame.path, frame.line)
        if definition is None:
            start, end = _window(index, frame)
            evidence.offer_lines(frame.path, start, end, "frame", value, note)
            continue
        evidence.offer(definition, "frame", value, note)
        if not is_test_definition(definition):
            framed.append((definition, value))
    for frame in frames:
        if is_test_path(frame.path) and index.enclosing(frame.path, frame.line) is None:
            start, end = _window(index, frame)
            evidence.offer_lines(frame.path, start, end, "frame", 0.2, f"test code in the traceback ({frame.path}:{frame.line})")
    return framed


def _in_loop(index: RepoIndex, frame: Frame) -> bool:
    """The frame's line is a loop's header or inside a loop's body (by indentation, within its definition)."""
    definition = index.enclosing(frame.path, frame.line)
    lines = index.lines(frame.path)
    if definition is None or not 0 < frame.line <= len(lines):
        return False
    indent = len(lines[frame.line - 1]) - len(lines[frame.line - 1].lstrip())
    for number in range(frame.line, definition.start_line - 1, -1):
        row = lines[number - 1]
        depth = len(row) - len(row.lstrip())
        if not row.strip() or (number != frame.line and depth >= indent):
            continue
        if _LOOP.match(row.lstrip()):
            return True
        indent = depth
    return False


def _failing_source_line(index: RepoIndex, frames: list[Frame]) -> str:
    """The source line of the deepest frame in test code: where the test stopped (any runner).

    A test that stopped at `with pytest.raises(E):` (or `self.assertRaises`) stopped because
    the block's body did not raise: the call it is about is in the body, so the body counts too.
    """
    for frame in frames:
        if is_test_path(frame.path) or _in_test_definition(index, frame):
            lines = index.lines(frame.path)
            if not 0 < frame.line <= len(lines):
                return ""
            line = lines[frame.line - 1]
            return "\n".join([line, *_raises_body(lines, frame.line)]) if _RAISES_BLOCK.match(line) else line
    return ""


def _raises_body(lines: list[str], line: int) -> list[str]:
    """The lines of the block a `with` statement at `line` (1-based) opens."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    body: list[str] = []
    for text in lines[line : line + _RAISES_BODY]:
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        body.append(text)
    return body


def _in_test_definition(index: RepoIndex, frame: Frame) -> bool:
    definition = index.enclosing(frame.path, frame.line)
    return definition is not None and is_test_definition(definition)


def _window(index: RepoIndex, frame: Frame) -> tuple[int, int]:
    symbols = index.symbols(frame.path)
    last = max(symbols.line_count if symbols else frame.line, frame.line)
    return max(1, frame.line - _WINDOW), min(last, frame.line + _WINDOW)


def _targets(index: RepoIndex, name: str, where: Definition | None) -> list[Definition]:
    """What a name resolves to, a class standing for its constructor too."""
    found = resolve(index, name, where)
    out = list(found)
    for target in found:
        if target.kind in ("class", "impl", "interface"):
            out.extend(
                d for d in index.definitions(target.path)
                if d.parent == target.symbol and d.name in _CONSTRUCTORS
            )
    return out


def _share(definition: Definition) -> float:
    return _CLASS_SHARE if definition.kind in ("class", "impl", "interface") else 1.0


def _test_names(
    index: RepoIndex, tests: list[Definition], test_files: list[str], use: TestUse, evidence: Evidence
) -> list[tuple[Definition, float]]:
    """Definitions the failing tests call or name, and those on the line where the failure stopped."""
    where = tests[0] if tests else None
    if where is None and test_files:  # tests with no definition of their own (`test('...', () => ...)`)
        where = Definition(test_files[0], "<module>", "<module>", "module", 1, 1, "")
    called: dict[str, tuple[Definition, float]] = {}
    names = dict(use.names)
    for name in use.failing_line:
        names.setdefault(name, 0.0)
    for name, strength in names.items():
        targets = [t for t in _targets(index, name, where) if not is_test_definition(t)]
        for target in targets:
            share = _share(target) / len(targets)
            if strength > 0:
                how = "called" if strength >= 1.0 else "named"
                evidence.offer(target, "test_calls", strength * share, f"{how} by the failing test {where.symbol if where else ''}".strip())
            if name in use.failing_line:
                evidence.offer(target, "failing_line", share, "named on the line where the test failed")
            if name in use.imported:
                evidence.offer(target, "imported", share, "imported by the failing test's file")
            old = called.get(target.key)
            value = max(strength, 1.0 if name in use.failing_line else 0.0) * share
            if old is None or value > old[1]:
                called[target.key] = (target, value)
    return list(called.values())


def _callees(index: RepoIndex, sources: Iterable[tuple[Definition, float]], evidence: Evidence) -> None:
    """One hop down from what the test called or the traceback ran: callees and nested definitions.

    The share a callee gets grows with its size next to the caller's: a thin
    wrapper's behaviour is its delegate's.
    """
    for source, strength in sources:
        own = _own_lines(index, source)
        for name in source.calls or source.refs:
            targets = [t for t in resolve(index, name, source) if t.key != source.key]
            for target in targets:
                near = 1.0 if target.path == source.path else 0.5
                share = _own_lines(index, target) / (own + _own_lines(index, target))
                evidence.offer(target, "callee", strength * near * share / len(targets), f"called by {source.symbol}")
        for child in index.definitions(source.path):
            if child.parent == source.symbol and child.kind in ("function", "method"):
                share = _own_lines(index, child) / (own + _own_lines(index, child))
                evidence.offer(child, "nested", strength * share, f"defined inside {source.symbol}")


def _delegation(index: RepoIndex, called: list[tuple[Definition, float]], evidence: Evidence) -> None:
    """A thin wrapper the test calls hands part of its test evidence to the same-file code it delegates to."""
    for source, _strength in called:
        candidate = evidence.candidates.get(source.key)
        if candidate is None:
            continue
        own = _own_lines(index, source)
        delegates = [
            t for name in source.calls for t in resolve(index, name, source) if t.path == source.path
        ] + [d for d in index.definitions(source.path) if d.parent == source.symbol]
        share = max((_own_lines(index, d) / (own + _own_lines(index, d)) for d in delegates), default=0.0)
        if share <= 0.5:
            continue
        for signal in _TEST_SIDE:
            if signal in candidate.values:
                candidate.values[signal] *= 1.0 - _DELEGATION * share
                candidate.notes[signal] += f" (a thin wrapper: {share:.0%} of the code is its delegates')"


def _own_lines(index: RepoIndex, definition: Definition) -> int:
    """Lines of a definition less those of the definitions nested in it (at least 1)."""
    nested = sum(
        d.end_line - d.start_line + 1 for d in index.definitions(definition.path) if d.parent == definition.symbol
    )
    return max(1, definition.end_line - definition.start_line + 1 - nested)


def _message_names(index: RepoIndex, use: TestUse, evidence: Evidence) -> None:
    for name in use.message:
        targets = index.named(name)
        if 0 < len(targets) <= 3:
            for target in targets:
                evidence.offer(target, "message", 1.0 / len(targets), "named in the failure message")


def _lexical(lexical: LexicalIndex, failure: Failure, evidence: Evidence) -> None:
    scores = lexical.scores(f"{failure.test_id}\n{failure.text}")
    if not scores:
        return
    by_key = lexical.by_key
    best = sorted(scores.items(), key=lambda item: -item[1])[:_BM25_CANDIDATES]
    top = best[0][1]
    for rank, (key, score) in enumerate(best, 1):
        evidence.offer(by_key[key], "bm25", score / top, f"BM25 rank {rank} for the failure text")
    for key, candidate in evidence.candidates.items():  # lexical evidence for everything else found
        if key in scores:
            candidate.offer("bm25", scores[key] / top, "BM25 score for the failure text")


def _names_like(
    index: RepoIndex, lexical: LexicalIndex, tests: list[Definition], use: TestUse, evidence: Evidence
) -> None:
    """Definitions named like the failing test ("test_format_filtering" -> `_build_format_filter`),
    or like a name on the failing line that does not exist (an AttributeError for a renamed method)."""
    wanted = [(t.name, f"named like the failing test {t.symbol}") for t in tests]
    wanted += [
        (n, f"named like `{n}` on the failing line")
        for n in use.failing_line
        if len(words(n)) >= 2 and not index.named(n)  # a missing attribute, not a keyword
    ]
    for name, note in wanted:
        for definition, similarity in lexical.name_matches(name, ignore=_TEST_WORDS):
            if definition.kind in ("function", "method") and similarity >= _NAME_LIKE_MIN:
                evidence.offer(definition, "name_like", similarity, note)


def sizes(index: RepoIndex, evidence: Evidence) -> None:
    """A prior: longer code holds more bugs (log of its own line count, nested code left out; 1.0 at 200)."""
    for candidate in evidence.candidates.values():
        if candidate.definition is not None:
            lines = _own_lines(index, candidate.definition)
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
