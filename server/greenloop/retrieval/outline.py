"""A file as a list of what it offers (signatures, first doc line, what each raises), without the bodies.

Generation shows a test file this instead of the code under test: tests are
written from the interfaces, and a small model has no code block to copy back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from greenloop.retrieval.model import Definition
from greenloop.retrieval.tags import extract

_CALLABLE = {"function", "method"}  # what is nested in these is not part of the interface
_RAISES = re.compile(r"\braise\s+([A-Za-z_][\w.]*)|\bthrow\s+new\s+([A-Za-z_][\w.]*)")
_DOC_OPEN = re.compile(r"^\s*[rRbBuU]?(\"\"\"|''')\s*(.*?)\s*(\"\"\"|''')?\s*$")
_LINE_COMMENT = re.compile(r"^\s*(///?|\*|/\*\*?)\s?(.*?)\s*(\*/)?\s*$")


def outline(path: str, text: str) -> str:
    """Markdown bullets, one per public definition (members indented); "" when none parse."""
    found = extract(path, text.encode()).definitions
    containers = {d.symbol for d in found if d.kind not in _CALLABLE}
    definitions = [d for d in found if _public(d.name) and (d.parent is None or d.parent in containers)]
    lines = text.splitlines()
    rows = []
    for definition in definitions:
        depth = definition.symbol.count(".")
        row = f"{'  ' * depth}- `{_header(definition, lines)}`"
        doc = _doc_line(definition, lines)
        if doc:
            row += f": {doc}"
        raised = _raised(definition, found, lines)
        if raised:
            row += f" (raises {', '.join(raised)})"
        rows.append(row)
    return "\n".join(rows)


def public_names(path: str, text: str) -> list[str]:
    """Names of the public top-level definitions (what a test imports from the file)."""
    names = []
    for definition in top_level(path, text):
        if _public(definition.name) and definition.name not in names:
            names.append(definition.name)
    return names


def top_level(path: str, text: str) -> list[Definition]:
    """The file's top-level definitions in order, each with its lines (decorators included)."""
    return [d for d in extract(path, text.encode()).definitions if d.parent is None]


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _header(definition: Definition, lines: list[str]) -> str:
    """The signature, after the decorators that change how it is called (`@dataclass`, `@staticmethod`)."""
    decorators = []
    for line in lines[definition.start_line - 1 : definition.end_line]:
        stripped = line.strip()
        if not stripped.startswith("@"):
            break
        decorators.append(stripped)
    return " ".join([*decorators, definition.signature.rstrip(":{ ").strip()])


def _doc_line(definition: Definition, lines: list[str]) -> str:
    """A Python docstring's first line, or the comment just above the definition."""
    first = _body_start(definition, lines)
    if first is not None and first < len(lines):
        match = _DOC_OPEN.match(lines[first])
        if match:
            return match.group(2)
    above = definition.start_line - 2
    if above >= 0:
        match = _LINE_COMMENT.match(lines[above])
        if match and match.group(2) and not match.group(2).startswith("#["):
            return match.group(2)
    return ""


def _body_start(definition: Definition, lines: list[str]) -> int | None:
    """Index of the first line after a Python header ending in ":" (None for other languages)."""
    for index in range(definition.start_line - 1, min(definition.end_line, len(lines))):
        if lines[index].rstrip().endswith(":") and not lines[index].lstrip().startswith("@"):
            return index + 1
    return None


def _raised(definition: Definition, definitions: Sequence[Definition], lines: list[str]) -> list[str]:
    """Exception types raised or thrown in its own lines (not in the definitions nested in it)."""
    inner = [
        d
        for d in definitions
        if d is not definition
        and definition.start_line <= d.start_line
        and d.end_line <= definition.end_line
        and (d.start_line, d.end_line) != (definition.start_line, definition.end_line)
    ]
    found: list[str] = []
    for number in range(definition.start_line, definition.end_line + 1):
        if any(d.contains(number) for d in inner) or number > len(lines):
            continue
        for match in _RAISES.finditer(lines[number - 1]):
            name = match.group(1) or match.group(2)
            if name not in found:
                found.append(name)
    return found
