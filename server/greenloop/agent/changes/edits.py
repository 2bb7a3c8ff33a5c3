"""SEARCH/REPLACE against file text: exact, then whitespace-insensitive, then a near match."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from greenloop.agent.changes.strings import string_rows
from greenloop.agent.changes.text import lf_lines

NEAR_MATCH_THRESHOLD = 0.86


class EditMiss(Exception):
    """The search text could not be placed; the message says why and shows the closest lines."""


@dataclass(frozen=True)
class EditResult:
    text: str
    match: str  # exact | whitespace | fuzzy


def apply_search_replace(text: str, search: str, replace: str, path: str = "") -> EditResult:
    """Replace the one place in `text` that `search` names, or raise EditMiss. `path` (the file's) tells which
    replacement lines continue a multi-line string: re-indenting keeps them as written (changes/strings.py)."""
    if not search.strip():
        raise EditMiss("the search text is empty; use a 'write' action to create or replace a whole file")
    count = text.count(search)
    if count == 1:
        return EditResult(text.replace(search, replace, 1), "exact")
    if count > 1:
        raise EditMiss(f"the search text matches {count} places; include more surrounding lines so it is unique")
    lines = lf_lines(text)  # not str.splitlines: a form feed or "\x1c" in a line is no line break
    search_lines = search.strip("\n").split("\n")
    hit = _whitespace_match(lines, search_lines)
    if hit is not None:
        return EditResult(_splice(lines, hit, len(search_lines), search_lines, replace, path), "whitespace")
    start, size, ratio = _nearest_window(lines, search_lines)
    if ratio >= NEAR_MATCH_THRESHOLD:
        return EditResult(_splice(lines, start, size, search_lines, replace, path), "fuzzy")
    raise EditMiss(_did_you_mean(lines, start, size, ratio) + _copied_from_report(text, search))


def _norm(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip())


def _whitespace_match(lines: list[str], search_lines: list[str]) -> int | None:
    want = [_norm(s) for s in search_lines]
    n = len(want)
    hits = [i for i in range(len(lines) - n + 1) if [_norm(x) for x in lines[i : i + n]] == want]
    return hits[0] if len(hits) == 1 else None


def _nearest_window(lines: list[str], search_lines: list[str]) -> tuple[int, int, float]:
    """Best (start, size, ratio) over windows of the search's length (give or take one line)."""
    target = "\n".join(_norm(s) for s in search_lines)
    best = (0, len(search_lines), 0.0)
    n = len(search_lines)
    for size in {max(1, n - 1), n, n + 1}:
        for i in range(0, max(1, len(lines) - size + 1)):
            candidate = "\n".join(_norm(x) for x in lines[i : i + size])
            matcher = difflib.SequenceMatcher(None, target, candidate, autojunk=False)
            if matcher.real_quick_ratio() <= best[2] or matcher.quick_ratio() <= best[2]:
                continue
            ratio = matcher.ratio()
            if ratio > best[2]:
                best = (i, size, ratio)
    return best


def _splice(lines: list[str], start: int, size: int, search_lines: list[str], replace: str, path: str = "") -> str:
    """Put `replace` where lines[start:start+size] were, re-indented like the file (a multi-line string's
    later lines as written: they are its content)."""
    old = lines[start : start + size]
    new_lines = replace.strip("\n").split("\n") if replace.strip() else []
    kept = string_rows(path, "\n".join(new_lines)) if path else frozenset()
    moved = _tabs_like(old, _reindent(old, search_lines, new_lines))
    new_lines = [new_lines[i] if i in kept else row for i, row in enumerate(moved)]
    newline = "\n" if not old or old[-1].endswith("\n") else ""
    block = "\n".join(new_lines) + (newline if new_lines else "")
    return "".join(lines[:start]) + block + "".join(lines[start + size :])


def _reindent(old: list[str], search: list[str], new: list[str]) -> list[str]:
    """Carry the file's indentation over to the replacement.

    Line by line when search, file block and replacement align (a model that
    flattened the indentation); otherwise shift everything by the difference
    of the blocks' smallest indentation.
    """
    old_text = [line.rstrip("\n") for line in old]
    if len(new) == len(search) == len(old_text):
        out = []
        for file_line, search_line, new_line in zip(old_text, search, new, strict=True):
            delta = _width(new_line) - _width(search_line)
            base = _indent(file_line)
            indent = base + " " * delta if delta >= 0 else base[: max(0, len(base) + delta)]
            out.append(indent + new_line.lstrip() if new_line.strip() else new_line)
        return out
    shift = _min_indent(old_text) - _min_indent(search)
    if shift > 0:
        return [" " * shift + line if line.strip() else line for line in new]
    if shift < 0:
        return [line[min(-shift, _width(line)) :] for line in new]
    return new


def _tabs_like(old: list[str], new: list[str]) -> list[str]:
    """Tab indentation where the replaced lines use tabs only (models answer in spaces; Python then
    stops at mixed tabs and spaces). A tab counts as 4 columns, as in `_width`."""
    indents = [_indent(line) for line in old if line.strip() and _indent(line)]
    if not indents or any(" " in indent for indent in indents):
        return new
    out = []
    for line in new:
        width = _width(line)
        out.append("\t" * (width // 4) + " " * (width % 4) + line.lstrip() if line.strip() else line)
    return out


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _width(line: str) -> int:
    return len(_indent(line).expandtabs(4))


def _min_indent(lines: list[str]) -> int:
    widths = [_width(line) for line in lines if line.strip()]
    return min(widths) if widths else 0


def _copied_from_report(text: str, search: str) -> str:
    """A note when the search text carries pytest's `...` abbreviation, which no source file holds.

    Qwen2.5-Coder 0.5B copied `assert {...} == {'a': 1, 'hel...test': 1, ...}` from the report,
    three times over, as the text to replace.
    """
    if "..." not in search or "..." in text:
        return ""
    return (
        "\nThe search text holds `...`: that is how the test report shortens long values, so it is "
        "not source code. Copy the lines from the file as shown above."
    )


def _did_you_mean(lines: list[str], start: int, size: int, ratio: float) -> str:
    if not lines:
        return "the search text is not in the file (the file is empty)"
    lo, hi = max(0, start - 1), min(len(lines), start + size + 1)
    shown = "".join(f"{n + 1:5d}| {lines[n]}" for n in range(lo, hi))
    return (
        f"the search text is not in the file (closest lines, {ratio:.0%} similar, did you mean):\n{shown}"
        "Copy the search text exactly from the file."
    )
