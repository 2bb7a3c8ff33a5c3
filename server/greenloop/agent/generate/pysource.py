"""The syntax tree of a generated python file, for the mends that rewrite one: None for other files or code that does not parse."""

from __future__ import annotations

import ast


def python_tree(path: str, text: str) -> ast.Module | None:
    """`text`'s tree when `path` is a python file and it parses; the mends leave everything else as written."""
    if not path.endswith(".py"):
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None
