"""Which tree-sitter grammar and tags query a file uses, loaded once per process.

Grammars come from the per-language wheels (tree-sitter-python, -javascript,
-typescript, -rust): they ship compiled parsers and work offline. Queries are
the `.scm` files in `queries/` next to this module.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import PurePosixPath

import tree_sitter as ts

# File suffix -> (grammar name, query name).
_SUFFIXES: dict[str, tuple[str, str]] = {
    ".py": ("python", "python"),
    ".pyi": ("python", "python"),
    ".js": ("javascript", "javascript"),
    ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"),
    ".jsx": ("javascript", "javascript"),
    ".ts": ("typescript", "typescript"),
    ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"),
    ".tsx": ("tsx", "typescript"),
    ".rs": ("rust", "rust"),
}


def language_of(path: str) -> str | None:
    """The grammar name for a path ("python", "tsx", ...), None when there is none."""
    entry = _SUFFIXES.get(PurePosixPath(path).suffix.lower())
    return entry[0] if entry else None


@cache
def grammar(name: str) -> ts.Language:
    """The compiled tree-sitter language for a grammar name."""
    if name == "python":
        import tree_sitter_python as python

        return ts.Language(python.language())
    if name == "javascript":
        import tree_sitter_javascript as javascript

        return ts.Language(javascript.language())
    if name in ("typescript", "tsx"):
        import tree_sitter_typescript as typescript

        return ts.Language(typescript.language_tsx() if name == "tsx" else typescript.language_typescript())
    if name == "rust":
        import tree_sitter_rust as rust

        return ts.Language(rust.language())
    raise KeyError(f"no tree-sitter grammar for {name!r}")


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
