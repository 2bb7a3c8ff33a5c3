"""docs/design.md stays a map: at most 260 lines and 16 KB, no line over 160 characters, every term in its glossary once."""

from __future__ import annotations

import re
from pathlib import Path

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"
MAX_LINES = 260
MAX_BYTES = 16 * 1024
MAX_LINE = 160
TERMS = ("small edits", "rung", "round", "ladder", "state", "candidate", "green", "right", "plausible", "done",
         "own round", "second look", "settle", "gates", "oracle", "cell", "suite")


def problems(text: str) -> list[str]:
    """What makes `text` too big for the map (empty when it fits)."""
    found = []
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        found.append(f"{len(lines)} lines (at most {MAX_LINES}): move measurements and detail to docs/decisions/")
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        found.append(f"{size} bytes (at most {MAX_BYTES}): move measurements and detail to docs/decisions/")
    found += [f"line {n}: {len(line)} characters (at most {MAX_LINE})"
              for n, line in enumerate(lines, 1) if len(line) > MAX_LINE]
    return found


def glossary(text: str) -> list[str]:
    """The terms of the `## Glossary` section, one per `- **term**: ...` line."""
    section = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \*\*(.+?)\*\*: \S", section, flags=re.MULTILINE)


def test_design_md_is_within_its_size() -> None:
    assert problems(DESIGN.read_text(encoding="utf-8")) == []


def test_the_size_check_finds_each_excess() -> None:
    fits = "short line\n" * MAX_LINES
    assert problems(fits) == []
    assert problems(fits + "one more\n") == [f"{MAX_LINES + 1} lines (at most {MAX_LINES}): move measurements and "
                                             "detail to docs/decisions/"]
    wide = "x" * (MAX_LINE + 1)
    assert problems(f"a\n{wide}\n") == [f"line 2: {MAX_LINE + 1} characters (at most {MAX_LINE})"]
    big = ("y" * 100 + "\n") * 170  # 170 lines, 17,170 bytes
    assert [p.split(" (")[0] for p in problems(big)] == ["17170 bytes"]


def test_every_term_is_in_the_glossary_once() -> None:
    terms = glossary(DESIGN.read_text(encoding="utf-8"))
    assert sorted(t for t in set(terms) if terms.count(t) > 1) == []
    assert [t for t in TERMS if t not in terms] == []
