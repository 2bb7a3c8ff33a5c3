"""The oracle model's answers: a request read for what it shows and the form it asks, answered with the reference fix.

The oracle stands in for a model that knows each case's fix (bench/oracle_fix.py) and sees only the
request. For every def of the fix the request shows (by its header line or its buggy lines) it answers
in the form the request asks: the function written again (`repair_function`), a long function's changed
lines as blocks inside it (`repair_region`), SEARCH/REPLACE blocks (`repair_blocks`), the whole file
(`repair_file`, `oneshot`, `rewrite`), or a DebugPlan's edits (`plan`, `improve`, `edit_repair`). A request that shows none of them gets what a model that finds no
bug there says: the code given back as it is, no block, or a plan without actions. Anything else
(a diagnosis, a value question, a request it cannot read) gets prose. Measurement only: never a default.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from greenloop.agent.changes.strings import string_rows
from greenloop.bench.oracle_fix import ReferenceFix

ORACLE = "oracle"  # `--model oracle`: the bench starts the oracle and points every cell at its case
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_SEVERAL = re.compile(r"^## The code to fix: \d+ definitions$", re.M)
_ONE_OF = re.compile(r"^### `(?P<symbol>[^`]+)` in `(?P<path>[^`]+)` \(lines \d+-\d+\)$", re.M)
_FUNCTION = re.compile(r"^## The code to fix: `(?P<symbol>[^`]+)` in `(?P<path>[^`]+)` \(lines \d+-\d+\)$", re.M)
_REGION = re.compile(r"^## The function to fix: `(?P<symbol>[^`]+)` in `(?P<path>[^`]+)` \(lines \d+-\d+\)$", re.M)
_FILE = re.compile(r"^## (?:The file to fix: |The file to correct: )?`(?P<path>[^`]+)`$", re.M)
_SECTION = re.compile(r"^### (?P<path>\S+?):(?P<start>\d+)-(?P<end>\d+) (?P<symbol>\S+)[^\n]*\n(?P<body>(?:[ \t]*\d*\| [^\n]*\n?)+)",
                      re.M)
_IMPORT_LINE = re.compile(r"^(?:import |from \S+ import )")
_NUMBERED = re.compile(r"^[ \t]*\d*\| ?")
PROSE = "I cannot tell from what I was shown where the bug is."


@dataclass(frozen=True)
class Request:
    """What the oracle reads of a chat request: the first user message (the request) and all user text."""

    first: str
    text: str

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]]) -> Request:
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        return cls(users[0] if users else "", "\n".join(users))


@dataclass(frozen=True)
class Shown:
    """A piece of code a request shows: its file, its text, the classes/functions around it, whether it is the file."""

    path: str
    code: str
    scope: str = ""
    whole: bool = False


def read_request(first: str) -> tuple[str, list[Shown]]:
    """The form a request asks for (function, region, blocks, file, plan, prose) and the code it shows."""
    if match := _REGION.search(first):  # a long function's lines to change, as blocks inside it
        return "region", [Shown(match["path"], _code_after(first, match.end()), _scope(match["symbol"]))]
    if "<<<<<<< SEARCH" in first and (match := _FILE.search(first)):
        return "blocks", [Shown(match["path"], _code_after(first, match.end()), whole=True)]
    if _SEVERAL.search(first):
        return "several", [Shown(m["path"], _code_after(first, m.end()), _scope(m["symbol"])) for m in _ONE_OF.finditer(first)]
    if match := _FUNCTION.search(first):
        symbol = match["symbol"]
        scope = symbol.rsplit(".", 1)[0] if "." in symbol else ""
        return "function", [Shown(match["path"], _code_after(first, match.end()), scope)]
    if '"actions": [' in first:
        return "plan", [Shown(m["path"], "\n".join(_NUMBERED.sub("", row, count=1)
                                                     for row in m["body"].rstrip("\n").split("\n")),
                              m["symbol"].rsplit(".", 1)[0] if "." in m["symbol"] else "")
                        for m in _SECTION.finditer(first) if "…" not in m["body"]]  # an excerpt: no search text
    if (match := _FILE.search(first)) and "Do not write the fix as code" not in first:
        return "file", [Shown(match["path"], _code_after(first, match.end()), whole=True)]
    return "prose", []


def shown_defs(fix: ReferenceFix, messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """`path::symbol` of each def of the fix that a request shows (the loss table reads the run records with it)."""
    _, pieces = read_request(Request.of(messages).first)
    found = [f"{d.path}::{d.symbol}" for s in pieces if s.path in fix.fixed
             for d in fix.shown(s.path, s.code, scope=s.scope)]
    return list(dict.fromkeys(found))


def answer(fix: ReferenceFix | None, messages: Sequence[Mapping[str, Any]]) -> str:
    """The oracle's reply to a chat request about the case whose fix is `fix` (None: a case it does not know)."""
    request = Request.of(messages)
    if fix is None or not request.first:
        return PROSE
    form, pieces = read_request(request.first)
    if form == "blocks":
        return _blocks(fix, pieces[0].path, pieces[0].code)
    if form == "region":
        return _region(fix, pieces[0], _REGION.search(request.first)["symbol"])  # type: ignore[index]
    if form == "function":
        symbol = _FUNCTION.search(request.first)["symbol"]  # type: ignore[index]
        return _function(fix, pieces[0].path, symbol, pieces[0].code)
    if form == "plan":
        return _plan(fix, pieces)
    if form == "several":
        return _several(fix, pieces)
    if form == "file":
        return _file(fix, pieces[0].path, pieces[0].code)
    return _prose(fix, request.first)


def _code_after(text: str, at: int) -> str:
    match = _FENCE.search(text, at)
    return match["body"].removesuffix("\n") if match else ""


def _function(fix: ReferenceFix, path: str, symbol: str, code: str) -> str:
    scope = symbol.rsplit(".", 1)[0] if "." in symbol else ""
    name = symbol.rsplit(".", 1)[-1]
    mended = fix.mend(path, code, scope=scope) if path in fix.fixed else code
    if _same(mended, code):
        return f"I find no bug in `{name}`; it is right as it is.\n\n```python\n{_flush(code)}\n```\n"
    imports, helpers = needed(fix.helpers.get(path, ()), mended, code)
    block = "\n\n".join([*(["\n".join(imports)] if imports else []), *helpers, _flush(mended)])
    return f"The bug is in `{name}`; here it is fixed.\n\n```python\n{block}\n```\n"


def _region(fix: ReferenceFix, piece: Shown, symbol: str) -> str:
    """The lines of the shown def the fix changes, as SEARCH/REPLACE blocks inside it (no import: a region reply
    changes that def alone); a def the fix leaves as it is, one block giving a line back as it was."""
    name = symbol.rsplit(".", 1)[-1]
    mended = fix.mend(piece.path, piece.code, scope=piece.scope) if piece.path in fix.fixed else piece.code
    edits = hunks(piece.code, mended) if not _same(mended, piece.code) else []
    if not edits:
        header = next((row for row in piece.code.split("\n") if row.strip()), "")
        return (f"I find no bug in `{name}`; it is right as it is.\n\n```python\n<<<<<<< SEARCH\n{header}\n=======\n"
                f"{header}\n>>>>>>> REPLACE\n```\n")
    body = "\n".join(f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE" for old, new in edits)
    return f"The bug is in `{name}`; these are the lines to change.\n\n```python\n{body}\n```\n"


def needed(added: Sequence[str], mended: str, shown: str) -> tuple[list[str], list[str]]:
    """The imports and new helper functions the fix adds to the file that the mended def uses (a reply
    brings them along; splice.py puts them in), none it does not use."""
    used = set(re.findall(r"\b\w+\b", mended)) - set(re.findall(r"\b\w+\b", shown))
    imports, helpers = [], []
    for text in added:
        if "\n" not in text and _IMPORT_LINE.match(text):
            names = re.findall(r"\b\w+\b", text.split(" import ", 1)[-1] if " import " in text else text)
            if used & {n for n in names if n not in ("import", "as")}:
                imports.append(text.strip())
        elif (match := re.match(r"\s*(?:async\s+)?def\s+(\w+)", text)) and match.group(1) in used:
            helpers.append(text)
    return imports, helpers


def _scope(symbol: str) -> str:
    return symbol.rsplit(".", 1)[0] if "." in symbol else ""


def _several(fix: ReferenceFix, pieces: list[Shown]) -> str:
    """Each shown def the fix changes, fixed, in its own block (the ones that stay are left out)."""
    blocks = []
    for piece in pieces:
        mended = fix.mend(piece.path, piece.code, scope=piece.scope) if piece.path in fix.fixed else piece.code
        if not _same(mended, piece.code):
            blocks.append(f"```python\n{_flush(mended)}\n```")
    if not blocks:
        shown = "\n\n".join(f"```python\n{_flush(piece.code)}\n```" for piece in pieces)
        return f"I find no bug in these definitions; they are right as they are.\n\n{shown}\n"
    return "These definitions are wrong together; here they are fixed.\n\n" + "\n\n".join(blocks) + "\n"


def _file(fix: ReferenceFix, path: str, code: str) -> str:
    mended = fix.mend(path, code + "\n", whole=True).removesuffix("\n") if path in fix.fixed else code
    if _same(mended, code):
        return f"`{path}` is right as it is.\n\n```python\n{code}\n```\n"
    return f"Here is `{path}` fixed.\n\n```python\n{mended}\n```\n"


def _blocks(fix: ReferenceFix, path: str, code: str) -> str:
    mended = fix.mend(path, code + "\n", whole=True).removesuffix("\n") if path in fix.fixed else code
    edits = hunks(code, mended)
    if not edits:
        return f"`{path}` needs no change."
    return "\n\n".join(f"{path}\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE" for old, new in edits) + "\n"


def _plan(fix: ReferenceFix, pieces: list[Shown]) -> str:
    actions: list[dict[str, str]] = []
    for piece in pieces:
        if piece.path in fix.fixed:
            mended = fix.mend(piece.path, piece.code, scope=piece.scope)
            actions += [{"kind": "edit", "path": piece.path, "search": old, "replace": new}
                        for old, new in hunks(piece.code, mended)]
    diagnosis = "The code shown has the bug; these edits fix it." if actions else "I find no bug in the code shown."
    return json.dumps({"diagnosis": diagnosis, "actions": actions})


def _prose(fix: ReferenceFix, first: str) -> str:
    for path in fix.fixed:
        for found in fix.shown(path, first):
            return f"The bug is in `{found.symbol}` in `{path}`: it does not do what the failing tests expect."
    return PROSE


def hunks(before: str, after: str) -> list[tuple[str, str]]:
    """SEARCH/REPLACE pairs (whole lines, each search unique in `before`) that turn `before` into `after`."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n"
    if b and not b[-1].endswith("\n"):
        b[-1] += "\n"
    whole = "".join(a)
    out: list[tuple[int, int, int, int]] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(1):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        while (whole.count("".join(a[i1:i2])) != 1 or not "".join(a[i1:i2]).strip()) and (i1 > 0 or i2 < len(a)):
            i1, j1 = (i1 - 1, j1 - 1) if i1 > 0 else (i1, j1)
            i2, j2 = (i2 + 1, j2 + 1) if i2 < len(a) else (i2, j2)
        if out and i1 < out[-1][1]:  # grown into the one before: one block
            i1, j1 = out[-1][0], out[-1][2]
            out.pop()
        out.append((i1, i2, j1, j2))
    pairs = [("".join(a[i1:i2]), "".join(b[j1:j2])) for i1, i2, j1, j2 in out]
    text = whole
    for old, new in pairs:  # applied in order, each search must still be found once (a moved def repeats text)
        if text.count(old) != 1:
            first, last = out[0], out[-1]
            return [("".join(a[first[0] : last[1]]), "".join(b[first[2] : last[3]]))]
        text = text.replace(old, new, 1)
    return pairs


def _same(one: str, other: str) -> bool:
    return [r.rstrip() for r in one.strip("\n").split("\n")] == [r.rstrip() for r in other.strip("\n").split("\n")]


def _flush(code: str) -> str:
    """A def as shown in its class, moved to column 0 (a reply's function is spliced at the file's indentation),
    a multi-line string's later lines as written (they are its content; splice.py keeps them so)."""
    rows = code.split("\n")
    first = next((row for row in rows if row.strip()), "")
    lead = first[: len(first) - len(first.lstrip())]
    kept = string_rows("reply.py", code)
    return "\n".join(row if i in kept else row[len(lead):] if row.startswith(lead) else row for i, row in enumerate(rows))
