"""Two texts of code compared as a test sees them: python by syntax tree, so comments, spacing and quote style are no change.

A reply that gives a function back with a comment more, other blank lines or other quotes changes nothing a
test can see, yet would cost a sandbox run (decision 2026-12-early-echo-stop). Python that parses (dedented:
a method is compared as written in its class) is compared by `ast.dump` without positions; a docstring is in
the tree, so a docstring change is a change. Other languages and fragments that do not parse are compared
as text, line by line with trailing spaces aside.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
import warnings
from functools import lru_cache

from greenloop.agent.changes.text import decode_text

PYTHON = (".py", ".pyi")


def normal_text(text: str) -> str:
    """The text with line endings, trailing spaces and leading/trailing blank lines aside."""
    return "\n".join(row.rstrip() for row in text.replace("\r\n", "\n").strip("\n").split("\n"))


def tree_of(path: str, text: str) -> str | None:
    """The syntax tree of python code (dedented), without positions; None for another language or code that
    does not parse."""
    if not path.endswith(PYTHON):
        return None
    try:
        with warnings.catch_warnings():  # an invalid escape ("\d") warns while parsing: not this check's business
            warnings.simplefilter("ignore")
            return ast.dump(ast.parse(textwrap.dedent(text)), include_attributes=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def same_code(path: str, a: str, b: str) -> bool:
    """Whether `a` and `b` are the same code: by syntax tree when both parse as python, else by text."""
    tree_a = tree_of(path, a)
    if tree_a is not None:
        tree_b = tree_of(path, b)
        if tree_b is not None:
            return tree_a == tree_b
    return normal_text(a) == normal_text(b)


def file_key(path: str, data: bytes, base: bytes | None) -> bytes | tuple[str, bytes]:
    """What a file counts as in a working copy's code fingerprint, given the file it was (`base`): its bytes when
    it is not python that parses, the base's bytes when it has the base's tree, else a digest of its tree.

    So two copies of one base get the same keys exactly when their files are the same code (a file with the
    base's tree counts as the base), and two keys are equal only for the same bytes or the same tree."""
    if data == base or not path.endswith(PYTHON):
        return data
    tree = _file_tree(path, data)
    if tree is None:
        return data
    if base is not None and _file_tree(path, base) == tree:
        return base
    return ("tree", tree)


@lru_cache(maxsize=128)
def _file_tree(path: str, data: bytes) -> bytes | None:
    """A digest of the file's syntax tree (a big file's dump is several times its size), None when it has none."""
    text = decode_text(data)
    tree = None if text is None else tree_of(path, text)
    return None if tree is None else hashlib.blake2b(tree.encode(), digest_size=16).digest()
