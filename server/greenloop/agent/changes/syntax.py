"""Syntax guard: does an edit introduce tree-sitter error nodes where the file had none?"""

from __future__ import annotations

from functools import cache

import tree_sitter as ts

from greenloop.retrieval.languages import grammar, language_of


@cache
def _parser(name: str) -> ts.Parser:
    """A parser of the guard's own (retrieval parses in worker threads with its own)."""
    return ts.Parser(grammar(name))


def parse(path: str, text: str) -> ts.Tree | None:
    """The syntax tree of `text`, None when the language is unknown."""
    name = language_of(path)
    return None if name is None else _parser(name).parse(text.encode("utf-8"))


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
