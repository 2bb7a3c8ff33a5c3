"""A reply's SEARCH/REPLACE blocks applied inside one function only: the edit that puts the changed lines in place.

The region rung (rungs/region.py) asks about a long function for the lines to change, not the whole
def. Each block's SEARCH must be found once in that function (as the file has it, or with other
indentation: the lines are then re-indented to the file's); the blocks apply one after another, and
the result is one edit of the function's own lines, like a spliced function (splice.py), so it
cannot land anywhere else. A block that names another file, whose lines are outside the function,
or that is empty, ambiguous or not found refuses the whole reply with the reason; CRLF in a reply or
in the file is read as LF and the file keeps its own line endings.
"""

from __future__ import annotations

import re

from greenloop.agent.changes.same_code import same_code
from greenloop.agent.changes.strings import string_rows
from greenloop.agent.changes.syntax import first_error, parse
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.rungs.blocks import parse_blocks
from greenloop.agent.repair.splice import (
    SpliceError,
    Target,
    Unchanged,
    definition_node,
    has_code_block,
    unique_prefix,
)

_SEARCH_MARK = re.compile(r"^[ \t]*<{5,9} ?SEARCH", re.M)
_LEAD = re.compile(r"[ \t]*")


def region_edits(source: str, target: Target, reply: str) -> list[EditAction]:
    """The edit that applies the reply's blocks to `target`'s lines in `source`; SpliceError says why there is none."""
    reply = reply.replace("\r\n", "\n")
    # a block given twice counts once: unfenced blocks are asked again for a code block (candidate_round.py), and the
    # two replies are read together
    blocks = list({(b.path, b.search, b.replace): b for b in parse_blocks(reply, target.path)}.values())
    if not blocks:
        raise SpliceError(_no_block(reply))
    lines = source.splitlines(keepends=True)
    first, last = _span(source, target, len(lines))
    old = [row.rstrip("\r\n") for row in lines[first : last + 1]]
    rows = list(old)
    for number, block in enumerate(blocks, 1):
        if block.path != target.path and not target.path.endswith("/" + block.path.lstrip("./")):
            raise SpliceError(f"block {number} names `{block.path}`: only `{target.symbol}` in {target.path} may "
                              "change here")
        rows = _applied(rows, block.search, block.replace, number, target, lines, (first, last))
    if same_code(target.path, "\n".join(rows), "\n".join(old)):  # python by syntax tree (same_code.py)
        raise Unchanged(f"the reply's blocks change nothing in `{target.symbol}`")
    newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
    search = "".join(lines[first : last + 1])
    replacement = "".join(row + newline for row in rows)
    if not search.endswith(("\n", "\r")):  # the function ends the file without a newline: so does its new text
        replacement = replacement.removesuffix(newline)
    candidate = "".join([*lines[:first], replacement, *lines[last + 1 :]])
    bad = first_error(target.path, candidate)
    if bad is not None and first_error(target.path, source) is None:
        raise SpliceError(f"with the reply's blocks the file does not parse (line {bad})")
    prefix = unique_prefix(search, lines, first)
    return [EditAction(path=target.path, search=prefix + search, replace=prefix + replacement)]


def _no_block(reply: str) -> str:
    if _SEARCH_MARK.search(reply):
        return "the reply's SEARCH/REPLACE block is not complete (no `=======` or `>>>>>>> REPLACE` line: cut off?)"
    if has_code_block(reply):
        return "the reply gives code but no SEARCH/REPLACE block: only the lines to change were asked for"
    return "the reply holds no SEARCH/REPLACE block" if reply.strip() else "the reply was empty"


def _span(source: str, target: Target, count: int) -> tuple[int, int]:
    """The function's first and last line (0-based), with its decorators: where tree-sitter finds it, else the target's."""
    tree = parse(target.path, source)
    node = None
    if tree is not None:
        node = definition_node(tree, target.name, target.start_line) or definition_node(tree, target.name)
    if node is not None:
        return node.start_point[0], node.end_point[0]
    if not 1 <= target.start_line <= target.end_line <= count:
        raise SpliceError(f"`{target.symbol}` is no longer at lines {target.start_line}-{target.end_line} of {target.path}")
    return target.start_line - 1, target.end_line - 1


def _applied(rows: list[str], search: str, replace: str, number: int, target: Target, lines: list[str],
             span: tuple[int, int]) -> list[str]:
    """`rows` (the function's lines) with one block applied; SpliceError when its SEARCH is not found once in them."""
    wanted = _rows(search)
    if not any(row.strip() for row in wanted):
        raise SpliceError(f"block {number}'s SEARCH is empty: copy the lines of `{target.symbol}` to change into it")
    new = _rows(replace)
    at = _found(rows, wanted, exact=True)
    if not at:
        at = _found(rows, wanted, exact=False)
        if len(at) == 1:  # found with other indentation: the new lines take the file's
            new = _reindented(new, _lead_of(wanted), _lead_of(rows[at[0] : at[0] + len(wanted)]),
                              string_rows(target.path, "\n".join(new)))
    if len(at) > 1:
        raise SpliceError(f"block {number}'s SEARCH lines occur {len(at)} times in `{target.symbol}`: copy more lines "
                          "around the change so that they are found once")
    if not at:
        raise SpliceError(_not_found(number, wanted, target, lines, span))
    start = at[0]
    return [*rows[:start], *new, *rows[start + len(wanted) :]]


def _not_found(number: int, wanted: list[str], target: Target, lines: list[str], span: tuple[int, int]) -> str:
    """Why a block's SEARCH was not found in the function: its lines are elsewhere in the file, or nowhere."""
    whole = [row.rstrip("\r\n") for row in lines]
    first, last = span
    outside = [at for at in _found(whole, wanted, exact=False) if at + len(wanted) - 1 < first or at > last]
    where = f"lines {first + 1}-{last + 1}"
    if outside:
        return (f"block {number} edits line {outside[0] + 1} of {target.path}, outside `{target.symbol}` ({where}): "
                f"only `{target.symbol}` may change here")
    shown = next((row.strip() for row in wanted if row.strip()), "")
    return (f"block {number}'s SEARCH lines are not in `{target.symbol}` ({where}); copy them exactly from it "
            f"(not found: `{shown[:80]}`)")


def _rows(text: str) -> list[str]:
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()  # the block's text ends with its last line's newline
    return rows


def _found(rows: list[str], wanted: list[str], *, exact: bool) -> list[int]:
    """Where `wanted` occurs in `rows` (0-based starts): row by row without trailing blanks, or also without indentation."""
    def norm(row: str) -> str:
        return row.rstrip() if exact else row.strip()

    target = [norm(row) for row in wanted]
    have = [norm(row) for row in rows]
    size = len(target)
    return [at for at in range(len(have) - size + 1) if have[at : at + size] == target]


def _lead_of(rows: list[str]) -> str:
    first = next((row for row in rows if row.strip()), "")
    return _LEAD.match(first).group(0)  # type: ignore[union-attr]


def _reindented(rows: list[str], theirs: str, ours: str, kept: frozenset[int]) -> list[str]:
    """Rows written at the reply's indentation (`theirs`), moved to the file's (`ours`); the rows in `kept` (a
    multi-line string's later lines: its content) as written."""
    out = []
    for i, row in enumerate(rows):
        if i in kept:
            out.append(row)
        elif not row.strip():
            out.append("")
        elif row.startswith(theirs):
            out.append(ours + row[len(theirs) :])
        else:
            out.append(ours + row.lstrip())
    return out
