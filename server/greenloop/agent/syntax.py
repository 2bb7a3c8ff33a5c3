"""Syntax guard: does an edit introduce tree-sitter error nodes where the file had none?"""

from __future__ import annotations

from functools import cache
from pathlib import PurePosixPath

import tree_sitter as ts


@cache
def _parser(suffix: str) -> ts.Parser | None:
    if suffix == ".py":
        import tree_sitter_python as grammar

        return ts.Parser(ts.Language(grammar.language()))
    if suffix in (".js", ".mjs", ".cjs", ".jsx"):
        import tree_sitter_javascript as js

        return ts.Parser(ts.Language(js.language()))
    if suffix in (".ts", ".tsx"):
        import tree_sitter_typescript as tsg

        lang = tsg.language_tsx() if suffix == ".tsx" else tsg.language_typescript()
        return ts.Parser(ts.Language(lang))
    if suffix == ".rs":
        import tree_sitter_rust as rust

        return ts.Parser(ts.Language(rust.language()))
    return None


def parse(path: str, text: str) -> ts.Tree | None:
    """The syntax tree of `text`, None when the language is unknown."""
    parser = _parser(PurePosixPath(path).suffix.lower())
    return None if parser is None else parser.parse(text.encode("utf-8"))


def first_error(path: str, text: str) -> int | None:
    """1-based line of the first syntax error in `text`, None when it parses (or the language is unknown)."""
    tree = parse(path, text)
    if tree is None:
        return None
    root = tree.root_node
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_error or c.is_missing]))
    return root.start_point[0] + 1


def introduced_error(path: str, before: str | None, after: str) -> int | None:
    """Line of a syntax error that `after` has and `before` did not (None: no new error)."""
    line = first_error(path, after)
    if line is None:
        return None
    if before is not None and first_error(path, before) is not None:
        return None  # the file was already broken; do not block a partial repair
    return line
