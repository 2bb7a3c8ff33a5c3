"""Word signals over the files near a failure: BM25 on the failure text, definitions named like the test."""

from __future__ import annotations

from collections.abc import Collection

from greenloop.retrieval.candidates import Evidence
from greenloop.retrieval.evidence import TestUse, is_test_definition
from greenloop.retrieval.failures import Failure
from greenloop.retrieval.graph import module_name
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.lexical import LexicalIndex, words
from greenloop.retrieval.lexical import build as build_lexical
from greenloop.retrieval.model import Definition

_BM25_CANDIDATES = 40
_IMPORT_HOPS = 2
_TEST_WORDS = frozenset({"test", "tests"})
_NAME_LIKE_MIN = 0.4


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


def offer_bm25(lexical: LexicalIndex, failure: Failure, evidence: Evidence) -> None:
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


def offer_names_like(
    index: RepoIndex, lexical: LexicalIndex, tests: list[Definition], use: TestUse, evidence: Evidence
) -> None:
    """Definitions named like the failing test ("test_format_filtering" -> `_build_format_filter`),
    or like a name on the failing line that does not exist (an AttributeError for a renamed method).

    A def nested in a function (a decorator's `inner`, a local `check`) names nothing in the project: a
    failing frame in one says which test failed, but its name would only pull in every `inner` there is."""
    wanted = [(t.name, f"named like the failing test {t.symbol}") for t in tests if not _local(index, t)]
    wanted += [
        (n, f"named like `{n}` on the failing line")
        for n in use.failing_line
        if len(words(n)) >= 2 and not index.named(n)  # a missing attribute, not a keyword
    ]
    for name, note in wanted:
        for definition, similarity in lexical.name_matches(name, ignore=_TEST_WORDS):
            if definition.kind in ("function", "method") and similarity >= _NAME_LIKE_MIN:
                evidence.offer(definition, "name_like", similarity, note)


def _local(index: RepoIndex, definition: Definition) -> bool:
    """Whether `definition` is nested in a function or method (a closure), not in a class or at module level."""
    if definition.parent is None:
        return False
    return any(d.symbol == definition.parent and d.kind in ("function", "method") for d in index.definitions(definition.path))
