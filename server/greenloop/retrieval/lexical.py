"""Lexical evidence: BM25 (bm25s) over the project's definitions, with failure text as the query.

A definition's document is its path, qualified name and source; identifiers
are split on snake_case and camelCase and lower-cased, so `get_new_command`
and `getNewCommand` both match "new command". Token lists are cached per
file version, so re-ranking after a one-file change re-tokenizes one file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import bm25s
import numpy as np

from greenloop.retrieval.model import Definition, FileSymbols

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # "parseHTMLEntity" -> parse, HTML, Entity
_MIN_LENGTH = 2
_CACHE_LIMIT = 20_000
_file_tokens: dict[int, tuple[FileSymbols, list[list[str]]]] = {}  # id(FileSymbols) -> its definitions' tokens


_SUFFIXES = ("ings", "ing", "ions", "ion", "ers", "er", "ors", "or", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude English stem, enough to meet "filtering" with "filter" and "selector" with "selection"."""
    while True:  # to a fixed point: "filtering" -> "filter" -> "filt", as "filter" does
        cut = next((s for s in _SUFFIXES if word.endswith(s) and len(word) - len(s) >= 4), None)
        if cut is None:
            return word
        word = word[: -len(cut)]


def name_stems(name: str) -> frozenset[str]:
    """The stems of an identifier's parts: "_build_format_filter" -> {"build", "format", "filt"}."""
    return frozenset(stem(w) for w in words(name))


def words(text: str) -> list[str]:
    """Identifier parts, lower-cased: "parse_dfxpTime2" -> ["parse", "dfxp", "time", "2"]."""
    return [w.lower() for w in _WORDS.findall(text) if len(w) >= _MIN_LENGTH]


class LexicalIndex:
    """BM25 over a fixed list of definitions (Lucene variant, k1=1.2, b=0.75)."""

    def __init__(self, definitions: Sequence[Definition], documents: Sequence[list[str]]) -> None:
        self.definitions = list(definitions)
        self.by_key = {d.key: d for d in self.definitions}
        self._by_stem: dict[str, list[int]] = {}
        self._stems = [name_stems(d.name) for d in self.definitions]
        for position, stems in enumerate(self._stems):
            for part in stems:
                self._by_stem.setdefault(part, []).append(position)
        self._bm25: bm25s.BM25 | None = None
        if self.definitions:
            self._bm25 = bm25s.BM25(k1=1.2, b=0.75)
            self._bm25.index([doc or [""] for doc in documents], show_progress=False)

    def scores(self, query: str) -> dict[str, float]:
        """Definition key -> BM25 score for the distinct words of `query` (zero scores left out)."""
        if self._bm25 is None:
            return {}
        terms = list(dict.fromkeys(words(query)))
        known = [t for t in terms if t in self._bm25.vocab_dict]
        if not known:
            return {}
        values = self._bm25.get_scores(known)
        hits = np.nonzero(values > 0)[0]
        return {self.definitions[i].key: float(values[i]) for i in hits}


    def name_matches(
        self, name: str, *, limit: int = 20, ignore: frozenset[str] = frozenset()
    ) -> list[tuple[Definition, float]]:
        """Definitions whose name shares word stems with `name` (less `ignore`): IDF-weighted Dice, best first."""
        wanted = name_stems(name) - ignore
        if not wanted:
            return []
        total = len(self.definitions) or 1
        idf = {part: math.log(1 + total / (1 + len(self._by_stem.get(part, ())))) for part in wanted}
        shared: dict[int, float] = {}
        for part in wanted:
            for position in self._by_stem.get(part, ()):
                shared[position] = shared.get(position, 0.0) + idf[part]
        wanted_weight = sum(idf.values())
        scored = []
        for position, weight in shared.items():
            own = sum(math.log(1 + total / (1 + len(self._by_stem[p]))) for p in self._stems[position])
            scored.append((self.definitions[position], 2 * weight / (wanted_weight + own)))
        scored.sort(key=lambda item: -item[1])
        return scored[:limit]


def build(
    files: Sequence[FileSymbols], lines_of: Callable[[str], list[str]], keep: Callable[[Definition], bool]
) -> LexicalIndex:
    """A `LexicalIndex` over the definitions of `files` that `keep` accepts."""
    if len(_file_tokens) > _CACHE_LIMIT:
        _file_tokens.clear()
    chosen: list[Definition] = []
    documents: list[list[str]] = []
    for symbols in files:
        cached = _file_tokens.get(id(symbols))
        if cached is None or cached[0] is not symbols:
            lines = lines_of(symbols.path)
            tokens = _documents(symbols.definitions, lines)
            _file_tokens[id(symbols)] = (symbols, tokens)
        else:
            tokens = cached[1]
        for definition, document in zip(symbols.definitions, tokens, strict=True):
            if keep(definition):
                chosen.append(definition)
                documents.append(document)
    return LexicalIndex(chosen, documents)


def _documents(definitions: Sequence[Definition], lines: list[str]) -> list[list[str]]:
    """Each definition's words: path, qualified name, and its own source (nested definitions left out,
    so a parent does not win on its children's words)."""
    children: dict[str, list[Definition]] = {}
    for definition in definitions:
        if definition.parent is not None:
            children.setdefault(definition.parent, []).append(definition)
    out = []
    for definition in definitions:
        skip = [(c.start_line, c.end_line) for c in children.get(definition.symbol, ())]
        own = [
            lines[n - 1]
            for n in range(definition.start_line, min(definition.end_line, len(lines)) + 1)
            if not any(start <= n <= end for start, end in skip)
        ]
        out.append(words(definition.path) + words(definition.symbol) + words("\n".join(own)))
    return out
