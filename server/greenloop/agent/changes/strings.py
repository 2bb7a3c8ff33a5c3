"""Which lines of a piece of code lie inside a string literal, so that re-indenting the code leaves them as written.

A reply's function is moved to the file's indentation line by line (repair/splice.py, region_edits.py).
A line that continues a multi-line string (a triple-quoted string, or any string token spanning lines)
is the string's content, not code: indenting it changes what the program says. Python is read with its
own tokenizer; other languages with tree-sitter's string nodes. Code that does not tokenize (or parse)
gives no such lines, and is re-indented as before.
"""

from __future__ import annotations

import io
import tokenize

from greenloop.agent.changes.syntax import parse
from greenloop.retrieval.languages import language_of

_STRING_NODES = {"string", "template_string", "string_literal", "raw_string_literal"}


def string_rows(path: str, text: str) -> frozenset[int]:
    """0-based indices of the rows of `text` (split at "\\n") that begin inside a string opened on an earlier row."""
    language = language_of(path)
    if language == "python":
        return _python_rows(text)
    if language is None:
        return frozenset()
    tree = parse(path, text)
    if tree is None or tree.root_node.has_error:
        return frozenset()
    rows: set[int] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _STRING_NODES and node.end_point[0] > node.start_point[0]:
            rows.update(range(node.start_point[0] + 1, node.end_point[0] + 1))
        else:
            stack.extend(node.children)
    return frozenset(rows)


def _python_rows(text: str) -> frozenset[int]:
    # Leading whitespace decides Python's indentation tokens, never where a string starts or ends: without
    # it a fragment (a block's REPLACE lines, a method cut out of its class) tokenizes whatever its indents.
    flat = "\n".join(row.lstrip(" \t") for row in text.split("\n"))
    rows: set[int] = set()
    opened: list[int] = []  # the rows where the f-strings now open began (Python >= 3.12 splits them)
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    try:
        for token in tokenize.generate_tokens(io.StringIO(flat).readline):
            if token.type == fstring_start:
                opened.append(token.start[0])
                continue
            if token.type == fstring_end and opened:
                first = opened.pop()
            elif token.type == tokenize.STRING:
                first = token.start[0]
            else:
                continue
            rows.update(range(first, token.end[0]))  # tokenize's rows are 1-based: these are the later rows, 0-based
    except (tokenize.TokenError, SyntaxError):
        pass  # the strings read before the error stand; one left open keeps today's re-indenting
    return frozenset(rows)
