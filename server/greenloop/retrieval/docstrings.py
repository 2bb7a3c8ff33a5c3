"""A definition's own documentation, its first lines tidied: a python docstring, else the comment block just above it.

A request lists what the function it shows calls, by signature; a callee's first doc line says what it
is for (`trim(text, width)`: "Cut `text` to `width` characters, with an ellipsis"), which a signature
alone does not. Python's docstring is read with `ast` from the def's own lines (the file need not parse
as a whole); other languages' doc comments (`///`, `/** ... */`, `//`, `#`) are the comment lines right
above the def. Bounded (DOC_LINES lines, DOC_CHARS characters), one line, printable; "" when there is none
or it cannot be read.
"""

from __future__ import annotations

import ast
import re
import textwrap

from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.languages import language_of
from greenloop.retrieval.model import Definition

DOC_LINES = 2  # of the first paragraph
DOC_CHARS = 160
_COMMENT = re.compile(r"^\s*(?:///?|/\*\*?|\*/?|#)")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal colour code written into a docstring


def doc_summary(index: RepoIndex, definition: Definition) -> str:
    """The first lines of `definition`'s docstring or doc comment, as one tidy line ("" for none)."""
    try:
        rows = index.lines(definition.path)
        if language_of(definition.path) == "python":
            text = _python_doc(rows[definition.start_line - 1 : definition.end_line])
        else:
            text = _comment_above(rows[: max(definition.start_line - 1, 0)])
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return ""  # a def this cannot read shows its signature alone
    return _tidy(text)


def _python_doc(rows: list[str]) -> str:
    tree = ast.parse(textwrap.dedent("\n".join(rows)))
    node = next((n for n in tree.body if isinstance(n, _DEFS)), None)
    return (ast.get_docstring(node, clean=True) or "") if node is not None else ""


def _comment_above(rows: list[str]) -> str:
    """The comment lines right above the def (its attributes and decorators passed over), markers left out."""
    found: list[str] = []
    for row in reversed(rows):
        stripped = row.strip()
        if stripped.startswith(("@", "#[")) and not found:
            continue  # a decorator or an attribute between the doc comment and the def
        if not stripped or not _COMMENT.match(row):
            break
        found.append(_COMMENT.sub("", row, count=1).rstrip("*/ ").strip())
    return "\n".join(reversed(found))


def _tidy(text: str) -> str:
    """The first paragraph's first DOC_LINES lines as one line: CRLF and control characters gone, spaces collapsed."""
    lines: list[str] = []
    for row in _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        row = " ".join("".join(c if c.isprintable() else " " for c in row).split())
        if not row:
            if lines:
                break
            continue
        lines.append(row)
        if len(lines) == DOC_LINES:
            break
    line = " ".join(lines)
    return line if len(line) <= DOC_CHARS else line[: DOC_CHARS - 1].rstrip() + "…"
