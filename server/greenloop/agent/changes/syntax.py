"""Syntax guard: does an edit introduce a syntax error where the file had none (tree-sitter, and python's parser)?"""

from __future__ import annotations

import ast
import warnings
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
        return _python_error(text) if language_of(path) == "python" else None
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


def _python_error(text: str) -> int | None:
    """Line of what Python's own parser refuses where tree-sitter found nothing, None when it parses.

    tree-sitter's grammar takes a compound statement with no body at the end of a file (`with x:` then
    nothing) without an error node, which Python refuses (IndentationError). A test file the model wrote
    until its token limit ended just so, was kept whole and failed to collect (2026-12-07). Parsed only:
    nothing of the text runs.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are warnings, not errors
            ast.parse(text)
    except SyntaxError as exc:
        return exc.lineno or 1
    except (ValueError, RecursionError, MemoryError):
        return None  # a NUL byte or a nesting too deep for the host's parser: tree-sitter's word stands
    return None
