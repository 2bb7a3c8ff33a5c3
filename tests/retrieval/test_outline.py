"""A file's outline for a test writer: public signatures, doc lines and raises, never a body."""

from __future__ import annotations

from greenloop.retrieval.outline import outline

PY = '''import re
from dataclasses import dataclass

WORD = re.compile(r"\\w+")


@dataclass
class Counter:
    """Counts words seen so far."""

    total: int = 0

    def add(self, text: str) -> int:
        if not text:
            raise ValueError("empty text")
        self.total += len(WORD.findall(text))
        return self.total

    def _reset(self) -> None:
        self.total = 0


def count_words(text: str) -> int:
    """Number of words in text."""
    def words():
        raise KeyError("never")
    if text is None:
        raise TypeError("no text")
    return len(WORD.findall(text))


def _helper(x):
    return x
'''


def test_python_outline_lists_public_signatures_without_bodies() -> None:
    assert outline("wc/core.py", PY).splitlines() == [
        "- `@dataclass class Counter`: Counts words seen so far.",
        "  - `def add(self, text: str) -> int` (raises ValueError)",
        "- `def count_words(text: str) -> int`: Number of words in text. (raises TypeError)",
    ]


def test_javascript_and_rust_outlines_keep_comments_and_throws() -> None:
    js = (
        "// Adds two numbers.\n"
        "function add(a, b) {\n  if (a == null) throw new TypeError('a');\n  return a + b;\n}\n"
        "class Stack {\n  push(x) { this.items.push(x); }\n}\n"
        "module.exports = { add, Stack };\n"
    )
    assert outline("src/calc.js", js).splitlines() == [
        "- `function add(a, b)`: Adds two numbers. (raises TypeError)",
        "- `class Stack`",
        "  - `push(x)`",
    ]
    rust = (
        "/// Parses a count.\n"
        "pub fn parse(s: &str) -> Result<u32, String> {\n    s.parse().map_err(|e| format!(\"{e}\"))\n}\n"
    )
    assert outline("src/lib.rs", rust) == "- `pub fn parse(s: &str) -> Result<u32, String>`: Parses a count."


def test_nothing_to_outline_is_empty() -> None:
    assert outline("wc/constants.py", "LIMIT = 3\n") == ""
    assert outline("notes.txt", "def f(): pass\n") == ""
