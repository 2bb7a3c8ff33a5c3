"""Small edits of the regular expressions in a function: one quantifier, one class member, one anchor.

A pattern that is one character off is a common bug in code that parses text (a class that lets the
separator through, `+` where the field may be empty, a missing `\\b` or `$`); a model seldom finds it
by reading, and the tests check each edit in about a second (the regex operators of mutation testing,
e.g. MutRex). The edits, in this order (the kinds with fewer edits first), each one that compiles:
- a quantifier: `+` <-> `*`, a `?` dropped, lazy <-> greedy;
- a group: an empty alternative added (`(a|b)` -> `(a|b|)`), or the group made optional;
- an anchor: `^` or `$` dropped or added, `\\b` before a branch of the pattern's alternation;
- a character class: one member dropped, then one of the pattern's own punctuation added
  (`&([^;]+;)` -> `&([^&;]+;)`);
- a `.` meant literally escaped.
An edit of text the pattern repeats is also offered made everywhere at once.

Patterns: python raw strings with a pattern character, strings passed to `re.*` / `regex.*`, and
JavaScript regex literals. Offsets are bytes of the file, as `small_edits` takes them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter as ts

from greenloop.agent.repair.nodes import Edit

_META = set("[]()\\*+?|^$")
_CLASS_SPECIAL = {"]": "\\]", "\\": "\\\\", "^": "\\^", "-": "\\-"}
_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


@dataclass
class _Group:
    start: int
    body: int  # where its content starts (after `(?:`, `(?P<name>` ...)
    end: int = -1  # after its `)`
    bars: list[int] = field(default_factory=list)


@dataclass
class _Scan:
    """Where a pattern's parts are (character offsets)."""

    quantifiers: list[tuple[int, int]] = field(default_factory=list)  # `+`, `*?`, `?` (not `{m,n}`)
    classes: list[tuple[int, int, list[tuple[int, int]]]] = field(default_factory=list)  # span, members
    groups: list[_Group] = field(default_factory=list)
    bars: list[int] = field(default_factory=list)  # top-level `|`
    literals: list[tuple[int, str]] = field(default_factory=list)  # punctuation matched as itself
    dots: list[int] = field(default_factory=list)  # unescaped `.` outside classes
    followed: set[int] = field(default_factory=set)  # ends of atoms that a quantifier follows


def pattern_edits(nodes: list[ts.Node]) -> Iterator[Edit]:
    """Every edit of every pattern among `nodes`, pattern by pattern."""
    for node in nodes:
        found = _pattern(node)
        if found is None:
            continue
        start, end, raw = found
        content = (node.text or b"")[start - node.start_byte : end - node.start_byte].decode("utf-8", "replace")
        seen = {content}
        for new in _edited(content):
            source = new if raw else new.replace("\\", "\\\\")
            if source not in seen:
                seen.add(source)
                yield start, end, source


def _pattern(node: ts.Node) -> tuple[int, int, bool] | None:
    """The byte span of a pattern's text, and whether it is written as it is read (raw)."""
    if node.type == "regex":
        body = node.child_by_field_name("pattern")
        return (body.start_byte, body.end_byte, True) if body is not None else None
    if node.type != "string" or len(node.children) < 2:
        return None
    first, last = node.children[0], node.children[-1]
    if first.type != "string_start" or last.type != "string_end":
        return None
    prefix = (first.text or b"").decode("utf-8", "replace").lower().rstrip("'\"")
    content = (node.text or b"")[first.end_byte - node.start_byte : last.start_byte - node.start_byte]
    if "f" in prefix or not _META & set(content.decode("utf-8", "replace")):
        return None
    raw = "r" in prefix
    if not raw and (b"\\" in content or not _regex_argument(node)):
        return None  # escapes would have to be read; a plain string is a pattern only where `re` takes it
    return first.end_byte, last.start_byte, raw


def _regex_argument(node: ts.Node) -> bool:
    parent = node.parent
    call = parent.parent if parent is not None and parent.type == "argument_list" else None
    function = call.child_by_field_name("function") if call is not None else None
    name = (function.text or b"").decode("utf-8", "replace") if function is not None else ""
    return name.startswith(("re.", "regex."))


def _edited(pattern: str) -> Iterator[str]:
    """The pattern with each edit (and an edit of repeated text made everywhere), if it compiles."""
    scan = _scan(pattern)
    if scan is None:
        return
    for start, end, new in _edits(pattern, scan):
        old = pattern[start:end]
        variants = [pattern[:start] + new + pattern[end:]]
        if len(old) >= 3 and pattern.count(old) > 1:
            variants.append(pattern.replace(old, new))
        for variant in variants:
            if _compiles(variant):
                yield variant


def _edits(p: str, scan: _Scan) -> Iterator[Edit]:
    """Quantifiers, groups, anchors, class members dropped, class members added, dots (the fewer first)."""
    for start, end in scan.quantifiers:
        base, lazy = p[start], end - start == 2
        if base in "+*":
            yield start, start + 1, "*" if base == "+" else "+"
            yield start, end, base if lazy else base + "?"
        elif base == "?" and not lazy:
            yield start, end, ""
    for group in scan.groups:
        inside = p[group.body : group.end - 1]
        if group.bars and not inside.startswith("|") and not inside.endswith("|") and "||" not in inside:
            yield group.start, group.end, p[group.start : group.end - 1] + "|)"
        elif not group.bars and group.end not in scan.followed:
            yield group.start, group.end, p[group.start : group.end] + "?"
    yield from _anchors(p, scan)
    for start, end, members in scan.classes:
        if len(members) > 1:
            for first, last in members:
                yield start, end, p[start:first] + p[last:end]
    punctuation = list(dict.fromkeys(c for _, c in scan.literals))
    for start, end, members in scan.classes:
        head = start + (2 if p.startswith("[^", start) else 1)
        present = {p[a:b] for a, b in members}
        for char in punctuation:
            if char not in present and _CLASS_SPECIAL.get(char, char) not in present:
                yield start, end, p[start:head] + _CLASS_SPECIAL.get(char, char) + p[head:end]
    for at in scan.dots:
        yield at, at + 1, "\\."


def _anchors(p: str, scan: _Scan) -> Iterator[Edit]:
    flags = _FLAGS.match(p)
    head = flags.end() if flags else 0
    if p.startswith("^", head):
        yield head, head + 1, ""
    else:
        yield head, head, "^"
    tail = len(p.rstrip()) if "x" in (flags.group(1) if flags else "") else len(p)
    if p[:tail].endswith("$") and not p[:tail].endswith("\\$"):
        yield tail - 1, tail, ""
    else:
        yield tail, tail, "$"
    for at in [head, *(bar + 1 for bar in scan.bars)]:
        while at < len(p) and p[at] in " \t\r\n":
            at += 1
        if not p.startswith(("\\b", "^", "|"), at) and at < len(p):
            yield at, at, "\\b"


def _scan(p: str) -> _Scan | None:
    """The pattern's parts, or None for one this reader does not follow (unbalanced, odd escapes)."""
    flags = _FLAGS.match(p)
    verbose = flags is not None and "x" in flags.group(1)
    scan, stack, last = _Scan(), [], -1  # `last`: where the latest atom ended
    i = flags.end() if flags else 0
    while i < len(p):
        c = p[i]
        if verbose and c in " \t\r\n":
            i += 1
            continue
        if verbose and c == "#":
            newline = p.find("\n", i)
            i = len(p) if newline < 0 else newline + 1
            continue
        if c == "\\":
            i, last = i + 2, i + 2
        elif c == "[":
            end, members = _class(p, i)
            if end < 0:
                return None
            scan.classes.append((i, end, members))
            i, last = end, end
        elif c == "(":
            body = i + 1
            if p.startswith("?", body):
                close = re.match(r"\?(?:[:=!>]|<[=!]|P<\w+>|<\w+>|P=\w+\)|[aiLmsux-]+[:)])", p[body:])
                if close is None:
                    return None
                body += close.end()
                if p[body - 1] == ")":  # `(?P=name)` or `(?i)`: an atom, not a group
                    i, last = body, body
                    continue
            stack.append(_Group(i, body))
            i = body
        elif c == ")":
            if not stack:
                return None
            group = stack.pop()
            group.end = i + 1
            scan.groups.append(group)
            i, last = i + 1, i + 1
        elif c == "|":
            (stack[-1].bars if stack else scan.bars).append(i)
            i += 1
        elif c in "*+?":
            end = i + 2 if p.startswith("?", i + 1) else i + 1
            scan.quantifiers.append((i, end))
            scan.followed.add(last)
            i = end
        elif c == "{" and (m := re.match(r"\{\d*,?\d*\}", p[i:])):
            scan.followed.add(last)
            i += m.end()
        else:
            if c == ".":
                scan.dots.append(i)
            elif not c.isalnum() and c not in " \t\r\n^$":
                scan.literals.append((i, c))
            i, last = i + 1, i + 1
    return None if stack else scan


def _class(p: str, start: int) -> tuple[int, list[tuple[int, int]]]:
    """The end of the class at `start` and its members (`a-z` and `\\d` are one member each)."""
    i = start + 1 + p.startswith("^", start + 1)
    members: list[tuple[int, int]] = []
    first = True
    while i < len(p):
        if p[i] == "]" and not first:
            return i + 1, members
        width = 2 if p[i] == "\\" else 1
        if p.startswith("-", i + width) and i + width + 1 < len(p) and p[i + width + 1] != "]":
            width += 1 + (2 if p[i + width + 1] == "\\" else 1)
        members.append((i, i + width))
        i += width
        first = False
    return -1, members


def _compiles(pattern: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError):
            return False
    return True
