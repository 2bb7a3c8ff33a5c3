"""Failures -> ranked code locations.

Tiers, best first: project frames outside the tests (deepest first); the
project definitions that the failing test and those frames name (one hop,
then two); the failing test itself and frames in test code; then the rest of
the repo by personalized PageRank seeded from all of the above. Without
frames, the test's name and the identifiers in the failure text seed it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from greenloop.retrieval.frames import parse_frames
from greenloop.retrieval.graph import DefinitionGraph, personalized_pagerank, resolve
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.model import Definition, Frame, Location
from greenloop_sandbox.report import TestFailure

FRAME, REFERENCE, TEST, GRAPH = 3.0, 2.0, 1.0, 0.0  # tier floors; a score is floor + [0, 1)
_WINDOW = 8  # lines either side of a frame that has no enclosing definition
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEST_HEADERS = (
    re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)", re.M),  # pytest summary
    re.compile(r"^_{3,} (?P<id>\S.*?) _{3,}\s*$", re.M),  # pytest section
    re.compile(r"^---- (?P<id>\S+) stdout ----", re.M),  # cargo test
    re.compile(r"^test (?P<id>\S+) \.\.\. FAILED", re.M),  # cargo test
    re.compile(r"^\s*(?:not ok \d+ - |✖ )(?P<id>.+?)(?: \(\d[\d.]*m?s\))?\s*$", re.M),  # node --test
)
_SECTIONS = re.compile(r"^(?:_{3,} |---- )(\S.*?)(?: _{3,}| stdout ----)\s*$", re.M)


@dataclass
class _Failure:
    test_id: str
    text: str
    file: str | None = None
    line: int | None = None


def is_test_definition(definition: Definition) -> bool:
    """Test code: in a test file, in a Rust `tests` module, or named test_*."""
    if is_test_path(definition.path):
        return True
    head = definition.symbol.split(".", 1)[0]
    return head in ("tests", "test") or definition.name.startswith("test_")


async def locate(index: RepoIndex, failures: Sequence[TestFailure] | str, *, top_k: int = 10) -> list[Location]:
    """The `top_k` code locations the failures are most likely about, best first."""
    items = _failures_from_text(failures) if isinstance(failures, str) else [_from_report(f) for f in failures]
    async with index.lock:
        return await asyncio.to_thread(rank, index, items, top_k)


def _from_report(failure: TestFailure) -> _Failure:
    text = "\n".join(part for part in (failure.message, failure.traceback) if part)
    return _Failure(failure.test_id, text, failure.file, failure.line)


def _failures_from_text(text: str) -> list[_Failure]:
    """Raw runner output -> one failure per pytest/cargo section, or one for the whole text."""
    ids: list[str] = []
    for pattern in _TEST_HEADERS:
        ids.extend(m["id"] for m in pattern.finditer(text) if m["id"] not in ids)
    parts = _SECTIONS.split(text)
    if len(parts) < 5:  # fewer than two sections: keep the output whole
        return [_Failure(" ".join(ids[:20]), text)]
    short = [i.rsplit("::", 1)[-1] for i in ids]
    full_ids = {i.rsplit("::", 1)[-1]: i for i in ids if "::" in i and short.count(i.rsplit("::", 1)[-1]) == 1}
    failures = []
    for header, body in zip(parts[1::2], parts[2::2], strict=True):
        name = header.split()[0]
        failures.append(_Failure(full_ids.get(name, name), body))
    return failures


class _Scores:
    """Best score and reason per definition key; line-range locations kept apart."""

    def __init__(self) -> None:
        self.best: dict[str, tuple[Definition, float, str]] = {}
        self.lines: dict[tuple[str, int, int], tuple[float, str]] = {}

    def offer(self, definition: Definition, score: float, why: str) -> None:
        old = self.best.get(definition.key)
        if old is None or score > old[1]:
            self.best[definition.key] = (definition, score, why)

    def offer_lines(self, path: str, start: int, end: int, score: float, why: str) -> None:
        old = self.lines.get((path, start, end))
        if old is None or score > old[0]:
            self.lines[(path, start, end)] = (score, why)


def rank(index: RepoIndex, failures: Sequence[_Failure], top_k: int) -> list[Location]:
    """Synchronous ranking (runs in a worker thread from `locate`)."""
    scores = _Scores()
    graph = index.derived("graph", lambda: DefinitionGraph(index))
    paths = index.paths
    for failure in failures:
        frames = parse_frames(failure.text, paths)
        if failure.file and failure.line and failure.file in index:
            frames.append(Frame(failure.file, failure.line, None))
        tests = _test_definitions(index, failure, frames)
        framed = _score_frames(index, frames, scores)
        for test in tests:
            scores.offer(test, TEST + 0.9, f"the failing test {failure.test_id or test.symbol}".strip())
        _score_references(index, framed, tests, failure, scores)
        if not framed and not tests:
            _score_names(index, failure, scores)
    _score_graph(graph, scores)
    return _top(scores, top_k)


def tests_named(
    index: RepoIndex, test_ids: str, file: str | None = None, near: Collection[str] = ()
) -> list[Definition]:
    """Test definitions named by runner test ids ("tests/t.py::test_x", "tests::it_works", ...).

    Candidates in `file`, the id's own path or the `near` files (test files in the
    traceback) win; when `near` is given, a same-named test elsewhere is ignored.
    """
    found: dict[str, Definition] = {}
    for test_id in test_ids.split():
        name = re.split(r"::|\.| > |/", test_id.split("[", 1)[0])[-1].strip()
        candidates = [d for d in index.named(name) if is_test_definition(d)] if name else []
        files = {f for f in (file, test_id.split("::", 1)[0] if "::" in test_id else None) if f} | set(near)
        in_file = [d for d in candidates if d.path in files]
        for definition in in_file or ([] if near else candidates[:3]):
            found[definition.key] = definition
    return list(found.values())


def _test_definitions(index: RepoIndex, failure: _Failure, frames: list[Frame]) -> list[Definition]:
    """The definitions of the failing test(s), found by name and by frames in test code."""
    near = {f.path for f in frames if is_test_path(f.path)}
    found = {d.key: d for d in tests_named(index, failure.test_id, failure.file, near)}
    for frame in frames:
        definition = index.enclosing(frame.path, frame.line)
        if definition is not None and is_test_definition(definition):
            found.setdefault(definition.key, definition)
    return list(found.values())


def _score_frames(index: RepoIndex, frames: list[Frame], scores: _Scores) -> list[Definition]:
    """Frames outside test code, deepest first, score in the frame tier; return their definitions."""
    framed: list[Definition] = []
    project = [f for f in frames if not is_test_path(f.path)]
    for depth, frame in enumerate(project):
        score = FRAME + 0.99 / (1 + depth)
        where = f"{frame.path}:{frame.line}"
        why = f"deepest project frame ({where})" if depth == 0 else f"traceback frame {depth + 1} ({where})"
        definition = index.enclosing(frame.path, frame.line)
        if definition is None:
            start, end = _window(index, frame)
            scores.offer_lines(frame.path, start, end, score, why)
        elif is_test_definition(definition):
            scores.offer(definition, TEST + 0.8, f"test code in the traceback ({where})")
        else:
            scores.offer(definition, score, why)
            framed.append(definition)
    for frame in frames:
        if is_test_path(frame.path) and index.enclosing(frame.path, frame.line) is None:
            start, end = _window(index, frame)
            scores.offer_lines(frame.path, start, end, TEST + 0.5, f"test code in the traceback ({frame.path}:{frame.line})")
    return framed


def _window(index: RepoIndex, frame: Frame) -> tuple[int, int]:
    symbols = index.symbols(frame.path)
    last = max(symbols.line_count if symbols else frame.line, frame.line)
    return max(1, frame.line - _WINDOW), min(last, frame.line + _WINDOW)


def _score_references(
    index: RepoIndex, framed: list[Definition], tests: list[Definition], failure: _Failure, scores: _Scores
) -> None:
    """One and two hops from the frames' and tests' definitions, plus names in the failure text."""
    weights: dict[str, tuple[Definition, float, str]] = {}

    def add(target: Definition, weight: float, why: str) -> None:
        if is_test_definition(target):
            return
        old = weights.get(target.key)
        weights[target.key] = (target, weight + (old[1] if old else 0.0), old[2] if old else why)

    sources = [(d, 1.0 / (1 + i), f"named by {d.symbol}") for i, d in enumerate(framed)]
    sources += [(t, 1.0, f"called by the failing test {t.symbol}") for t in tests]
    hop_two: list[tuple[Definition, float, str]] = []
    for source, weight, why in sources:
        for name in source.refs:
            targets = resolve(index, name, source)
            for target in targets:
                add(target, weight / len(targets), why)
                hop_two.append((target, 0.3 * weight / len(targets), f"named by {target.symbol}"))
    for source, weight, why in hop_two:
        for name in source.refs:
            for target in resolve(index, name, source):
                add(target, weight, why)
    mentioned = set(_IDENT.findall(failure.text))
    for name in mentioned:
        targets = index.named(name)
        for target in targets if 0 < len(targets) <= 3 else ():
            add(target, 0.5 / len(targets), "named in the failure output")
    top = max((w for _, w, _ in weights.values()), default=1.0)
    for target, weight, why in weights.values():
        scores.offer(target, REFERENCE + 0.99 * weight / top, why)


def _score_names(index: RepoIndex, failure: _Failure, scores: _Scores) -> None:
    """No frames, no test found: match definition names to the test's name and the failure text."""
    words: dict[str, float] = {}
    for test_id in failure.test_id.split():
        for token in _IDENT.findall(test_id):
            words[token.removeprefix("test_")] = 1.0
    for token in _IDENT.findall(failure.text):
        words.setdefault(token, 0.4)
    matched = [(d, w) for name, w in words.items() for d in index.named(name) if not is_test_definition(d)]
    for definition, weight in matched:
        scores.offer(definition, REFERENCE + 0.5 * weight, "named by the failing test")


def _score_graph(graph: DefinitionGraph, scores: _Scores) -> None:
    seeds = {key: (d, score) for key, (d, score, _) in scores.best.items()}
    if not seeds:
        return
    ranks = personalized_pagerank(graph, seeds)
    top = max((value for key, (_, value) in ranks.items() if key not in seeds), default=0.0)
    if top <= 0.0:
        return
    for key, (definition, value) in ranks.items():
        if key not in seeds:
            scores.offer(definition, GRAPH + 0.99 * value / top, "related by the reference graph")


def _top(scores: _Scores, top_k: int) -> list[Location]:
    found = [
        Location(d.path, d.symbol, d.kind, d.start_line, d.end_line, score, why)
        for d, score, why in scores.best.values()
    ]
    found += [
        Location(path, f"{path}:{start}-{end}", "lines", start, end, score, why)
        for (path, start, end), (score, why) in scores.lines.items()
    ]
    found.sort(key=lambda loc: (-loc.score, loc.path, loc.start_line))
    return found[:top_k]
