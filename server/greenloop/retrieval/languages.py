"""Which tree-sitter grammar and tags query a file uses, loaded once per process.

Which suffix is which grammar is the language records' (`greenloop_sandbox.languages`);
the grammars come from the per-language wheels (tree-sitter-python, -javascript,
-typescript, -rust), keyed here by grammar name: they ship compiled parsers and
work offline. Queries are the `.scm` files in `queries/` next to this module.
The language records are read on the first `language_of`, not on import: a
parsing worker is told each file's grammar and never needs them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import PurePosixPath

import tree_sitter as ts


def _python() -> object:
    import tree_sitter_python as python

    return python.language()


def _javascript() -> object:
    import tree_sitter_javascript as javascript

    return javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript as typescript

    return typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript as typescript

    return typescript.language_tsx()


def _rust() -> object:
    import tree_sitter_rust as rust

    return rust.language()


# Grammar name (as the language records name it) -> its compiled language, from its wheel.
_LOADERS: dict[str, Callable[[], object]] = {
    "python": _python, "javascript": _javascript, "typescript": _typescript, "tsx": _tsx, "rust": _rust,
}


@cache
def _grammars() -> dict[str, str]:
    """File suffix -> grammar name, from every language's record (its template's `[language]` table);
    a grammar with no wheel here leaves its files unparsed, like any other text."""
    from greenloop_sandbox.languages import languages  # here: importing greenloop_sandbox takes ~0.1 s

    return {suffix: name for language in languages() for suffix, name in language.grammars.items()
            if name in _LOADERS}


def language_of(path: str) -> str | None:
    """The grammar name for a path ("python", "tsx", ...), None when there is none."""
    return _grammars().get(PurePosixPath(path).suffix.lower())


@cache
def grammar(name: str) -> ts.Language:
    """The compiled tree-sitter language for a grammar name."""
    if name not in _LOADERS:
        raise KeyError(f"no tree-sitter grammar for {name!r}")
    return ts.Language(_LOADERS[name]())


@cache
def parser(name: str) -> ts.Parser:
    return ts.Parser(grammar(name))


def query_text(query_name: str) -> str:
    return resources.files("greenloop.retrieval").joinpath("queries").joinpath(f"{query_name}.scm").read_text("utf-8")


@cache
def tags_query(name: str) -> ts.Query:
    """The definitions/references query for a grammar name."""
    query_name = "typescript" if name == "tsx" else name
    return ts.Query(grammar(name), query_text(query_name))
