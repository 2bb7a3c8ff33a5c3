"""A corrected function out of a model's reply, spliced in at its definition with tree-sitter.

The model replies with the whole function in a code block; greenloop finds the definition of
the same name in it, puts it where the old one was (with the file's indentation) and records
that as an `edit` whose search text is the file's own lines, so it cannot miss. Extra helper
definitions (before a top-level function) and new imports come along; anything else is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from greenloop.agent.changes.same_code import same_code
from greenloop.agent.changes.strings import string_rows
from greenloop.agent.changes.syntax import first_error, parse
from greenloop.agent.plan import EditAction

_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[^\n]*$")
# Node types that define something, per grammar family; a name is the node's `name` field.
DEFINITIONS = {
    "function_definition", "class_definition",  # python
    "function_declaration", "generator_function_declaration", "method_definition", "class_declaration",  # js/ts
    "function_item", "impl_item", "struct_item", "enum_item",  # rust
}
_IMPORTS = {"import_statement", "import_from_statement", "use_declaration"}


class SpliceError(ValueError):
    """Why a reply gives no usable function (said to the model and kept in the records)."""


class Unchanged(SpliceError):
    """The reply's function is the one already in the file."""


@dataclass(frozen=True)
class Target:
    """The definition a repair is about: where it is and what it is called."""

    path: str
    symbol: str  # qualified, e.g. "Stack.push"
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int

    @property
    def name(self) -> str:
        return self.symbol.rsplit(".", 1)[-1]


def fenced(text: str) -> list[tuple[str, int]]:
    """Each closed fenced block of `text`: its body and the offset just past its closing fence's line end.

    A block closes at the first line holding its fence alone, indented at most 3 spaces more than the opening
    (CommonMark's rule): a docstring's own example block (```python ... ``` inside the def, indented with its
    body) is part of the code, not the block's end. A block no such line closes closes at its fence indented
    any way (a small model indents its closing fence with the code), and one that nothing closes runs to the end."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    found: list[tuple[str, int]] = []
    n = 0
    while n < len(lines):
        opening = _OPENING.match(lines[n].rstrip("\r\n"))
        n += 1
        if opening is None:
            continue
        fence, depth = opening["fence"], len(opening["indent"].expandtabs(4)) + 3
        closing = _closing(lines, n, fence, depth)
        if closing is None:
            closing = _closing(lines, n, fence, None)
        if closing is None:
            break
        found.append((text[starts[n] : starts[closing]], starts[closing] + len(lines[closing].rstrip("\r\n"))))
        n = closing + 1
    return found


def _closing(lines: list[str], start: int, fence: str, depth: int | None) -> int | None:
    """The index of the first line from `start` that is `fence` alone, indented at most `depth` (None: any)."""
    for m in range(start, len(lines)):
        row = lines[m].rstrip("\r\n")
        stripped = row.lstrip(" \t")
        if stripped.rstrip(" \t") == fence and (
                depth is None or len(row[: len(row) - len(stripped)].expandtabs(4)) <= depth):
            return m
    return None


def code_blocks(reply: str) -> list[str]:
    """The fenced blocks of a reply (the reply itself when it has none and is not empty)."""
    blocks = [body for body, _ in fenced(reply)]
    if blocks:
        return blocks
    text = reply.strip("\n")
    if text.lstrip().startswith(("```", "~~~")):  # cut off after the opening fence
        text = text.split("\n", 1)[1] if "\n" in text else ""
    return [text] if text.strip() else []


def closed_blocks(so_far: str) -> str | None:
    """The part of a reply being streamed that ends with a closed code block (its whole lines), or None when its
    last complete line closes none. `code_blocks` of that part are the first blocks of the whole reply, whatever
    follows: a block is found by its opening and its first closing fence, both in it."""
    end = so_far.rfind("\n")
    if end < 0:
        return None
    lines = so_far[: end + 1]
    ends = [end for _, end in fenced(lines)]
    return lines if ends and ends[-1] == end else None


def has_code_block(reply: str) -> bool:
    """Whether the reply holds a fenced code block (a reply of prose alone is asked for the code)."""
    return bool(fenced(reply)) or bool(re.search(r"^[ \t]*(`{3,}|~{3,})", reply, re.M))


def definition_node(tree: ts.Tree, name: str, line: int | None = None) -> ts.Node | None:
    """The definition called `name` (at 1-based `line` when given), outermost first, with its decorators."""
    stack = [tree.root_node]
    while stack:
        node = stack.pop(0)
        if node.type in DEFINITIONS and _name(node) == name and (line is None or _starts(node, line)):
            parent = node.parent
            return parent if parent is not None and parent.type == "decorated_definition" else node
        stack.extend(node.children)
    return None


def _starts(node: ts.Node, line: int) -> bool:
    first = node.start_point[0] + 1
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        return line in (first, parent.start_point[0] + 1)
    return first == line


def _name(node: ts.Node) -> str:
    named = node.child_by_field_name("name")
    return named.text.decode("utf-8", "replace") if named is not None and named.text is not None else ""


def definition_name(node: ts.Node) -> str:
    """The name a definition node defines (through its decorators); "" for any other node."""
    inner = _definition_of(node)
    return _name(inner) if inner.type in DEFINITIONS else ""


def splice(source: str, target: Target, reply: str) -> list[EditAction]:
    """The edits that put the reply's `target.name` in place of the file's; SpliceError says why not."""
    original = parse(target.path, source)
    if original is None:
        raise SpliceError(f"{target.path} is in a language greenloop cannot parse")
    old = definition_node(original, target.name, target.start_line) or definition_node(original, target.name)
    if old is None:
        raise SpliceError(f"`{target.name}` is no longer defined in {target.path}")
    new_text, helpers, imports = _from_reply(target, reply)
    lines = source.splitlines(keepends=True)
    first, last = old.start_point[0], old.end_point[0]
    indent = re.match(r"[ \t]*", lines[first]).group(0)  # type: ignore[union-attr]
    if _is_decorated(old) and not new_text.lstrip().startswith("@"):
        first = _definition_of(old).start_point[0]  # keep the file's decorators
    newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
    replacement = _indented(target.path, new_text, indent, newline)
    if helpers and not indent:
        replacement = _indented(target.path, helpers, indent, newline) + newline + replacement
    search = "".join(lines[first : last + 1])
    if same_code(target.path, replacement, search):  # python by syntax tree: a comment or spacing is no change
        raise Unchanged(f"the reply's `{target.name}` is the same as the one in the file: it changes nothing")
    candidate = "".join([*lines[:first], replacement, *lines[last + 1 :]])
    bad = first_error(target.path, candidate)
    if bad is not None and first_error(target.path, source) is None:
        raise SpliceError(f"with the reply's `{target.name}` the file does not parse (line {bad})")
    prefix = unique_prefix(search, lines, first)
    edits = [EditAction(path=target.path, search=prefix + search, replace=prefix + replacement)]
    extra = _import_edit(target.path, lines, imports, newline, first)
    return [*extra, *edits]


def _from_reply(target: Target, reply: str) -> tuple[str, str, list[str]]:
    """(the definition's text, dedented; helper definitions; import lines) from the first block that has it."""
    blocks = code_blocks(reply)
    if not blocks:
        raise SpliceError("the reply was empty")
    seen: list[str] = []
    broken = ""
    for block in blocks:
        tree = parse(target.path, block)
        if tree is None:
            continue
        node = definition_node(tree, target.name)
        if node is None:
            seen.extend(_name(n) for n in tree.root_node.children if n.type in DEFINITIONS and _name(n))
            if tree.root_node.has_error:
                broken = broken or f" (its code does not parse at line {first_error(target.path, block)})"
            continue
        if node.has_error:
            bad = first_error(target.path, _text(target.path, block, node)) or 1
            raise SpliceError(f"the reply's `{target.name}` does not parse (line {bad} of it)")
        text = _text(target.path, block, node)
        helpers = [
            _text(target.path, block, n) for n in tree.root_node.children
            if n.type in DEFINITIONS | {"decorated_definition"} and n != node and not n.has_error
            and definition_name(n) != target.name and not _contains(n, node)
        ]
        imports = [_text(target.path, block, n).strip() for n in tree.root_node.children if n.type in _IMPORTS]
        return text, "\n\n".join(h.rstrip("\n") for h in helpers), imports
    if not has_code_block(reply) and not seen:
        raise SpliceError("the reply holds no code block, only prose")
    others = ", ".join(f"`{n}`" for n in dict.fromkeys(seen)) or "no function"
    raise SpliceError(f"the reply defines {others}, not `{target.name}`{broken}")


def _contains(outer: ts.Node, inner: ts.Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _is_decorated(node: ts.Node) -> bool:
    return node.type == "decorated_definition"


def _definition_of(node: ts.Node) -> ts.Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        return inner if inner is not None else node
    return node


def _text(path: str, block: str, node: ts.Node) -> str:
    """The node's whole lines, dedented by the node's own column (a multi-line string's later lines as written)."""
    rows = block.split("\n")[node.start_point[0] : node.end_point[0] + 1]
    column = node.start_point[1]
    lead = rows[0][:column] if rows else ""
    if lead.strip():  # the node does not start its line (`x = 1; def f`): take it from its column
        rows[0] = rows[0][column:]
        lead = ""
    kept = string_rows(path, "\n".join(rows))
    out = [row if i in kept else row[len(lead) :] if row.startswith(lead) else row.lstrip() for i, row in enumerate(rows)]
    return "\n".join(out).rstrip() + "\n"


def _indented(path: str, text: str, indent: str, newline: str) -> str:
    """`text` moved to `indent`, line by line, but for a multi-line string's later lines: they are its content."""
    rows = text.rstrip("\n").split("\n")
    kept = string_rows(path, "\n".join(rows))
    return "".join((row.rstrip("\r") if i in kept else indent + row.rstrip("\r") if row.strip() else "") + newline
                   for i, row in enumerate(rows))


def unique_prefix(search: str, lines: list[str], first: int) -> str:
    """The file's lines before `search` (at index `first`) that make it occur once in the file ("" when
    it does already). An edit puts them in front of both its search and its replace text."""
    whole = "".join(lines)
    start = first
    while whole.count("".join(lines[start:first]) + search) > 1 and start > 0:
        start -= 1
    return "".join(lines[start:first])


def _import_edit(path: str, lines: list[str], imports: list[str], newline: str, before: int) -> list[EditAction]:
    """An edit adding the reply's imports the file lacks, after the file's last top-level import."""
    present = {row.strip() for row in lines}
    wanted = [imp for imp in dict.fromkeys(imports) if imp not in present]
    if not wanted:
        return []
    top = [i for i, row in enumerate(lines[:before]) if re.match(r"(import |from \S+ import |use )", row)]
    added = "".join(imp + newline for imp in wanted)
    if top:
        anchor = lines[top[-1]]
        if "".join(lines).count(anchor) == 1:
            return [EditAction(path=path, search=anchor, replace=anchor + added)]
        return []
    anchor = next((row for row in lines if row.strip()), "")
    if not anchor or "".join(lines).count(anchor) != 1 or anchor.startswith(("#!", '"""', "'''")):
        return []
    return [EditAction(path=path, search=anchor, replace=added + newline + anchor)]
