"""Small edits that guard a statement against what is missing: a `None` check, an attribute's default
(python, on the lines the failure went through).

The repair templates for two of the most common runtime errors in python (`TypeError` on `None`,
`AttributeError`); `small_edits` orders them among the other edits. (A `try` around what the failure
raised was a third until 2026-11-29: removed by the ablation, docs/decisions/2026-11-ablation.md.)
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from greenloop.agent.repair.nodes import (
    BLOCKS,
    NOT_STATEMENTS,
    Edit,
    local_names,
    node_text,
    read,
    root_text,
    walk,
)


def touches(node: ts.Node, spans: list[tuple[int, int]]) -> bool:
    """The node's text overlaps one of the byte spans (the hot lines: where the failure went through)."""
    return any(node.start_byte < last and node.end_byte > first for first, last in spans)


def guards(definition: ts.Node, nodes: list[ts.Node], language: str,
           spans: list[tuple[int, int]]) -> Iterator[Edit]:
    """A missing `None` check (python): for each local name a statement reads, `if x is None: return R`
    before it, and the statement run only `if x is not None:`. R is the empty value of what the function
    returns elsewhere (`False` in a function that returns bools, `[]`, `''`, ...), then `None`. Statements: every `return` of a value, and
    the ones on a hot line (where the failure went through: `TypeError: ... 'NoneType'`)."""
    if language != "python":
        return
    local = set(local_names(definition))
    empties = _empties(nodes)
    for node, line_start, indent, step, nested in _statements(nodes):
        if not touches(node, spans) and not (node.type == "return_statement" and node.named_children):
            continue
        for name in dict.fromkeys(node_text(n) for n in walk(node) if read(n) and node_text(n) in local):
            for value in empties:
                yield line_start, line_start, f"{indent}if {name} is None:\n{indent}{step}return {value}\n"
            yield line_start, node.end_byte, f"{indent}if {name} is not None:\n{nested}"


def _statements(nodes: list[ts.Node]) -> Iterator[tuple[ts.Node, int, str, str, str]]:
    """Each statement on lines of its own: the node, where its line starts, its indentation, one step
    of indentation, and its text indented one step more (to go inside an `if` or a `try`)."""
    for node in nodes:
        if node.parent is None or node.parent.type not in BLOCKS or node.type in NOT_STATEMENTS - {"return_statement"}:
            continue
        source = root_text(node)
        line_start = node.start_byte - node.start_point[1]
        indent = source[line_start : node.start_byte].decode("utf-8", "replace")
        if indent.strip() or source[node.end_byte : node.end_byte + 1] not in (b"\n", b"\r", b""):
            continue  # shares its line with other code
        step = "\t" if indent.startswith("\t") else "    "
        text = source[line_start : node.end_byte].decode("utf-8", "replace")
        yield node, line_start, indent, step, "\n".join(step + row if row.strip() else row for row in text.split("\n"))


def defaults(nodes: list[ts.Node], language: str, spans: list[tuple[int, int]]) -> Iterator[Edit]:
    """`x.name` -> `getattr(x, "name", None)` on a hot line (python): an attribute that is not always set
    (`AttributeError: ... has no attribute`). Not a method called, nor a name assigned."""
    for node in nodes if language == "python" else ():
        parent, owner, name = node.parent, node.child_by_field_name("object"), node.child_by_field_name("attribute")
        if node.type != "attribute" or parent is None or owner is None or name is None:
            continue
        if parent.type in ("call", "assignment", "augmented_assignment", "delete_statement") and (
                parent.child_by_field_name("function") == node or parent.child_by_field_name("left") == node):
            continue
        if touches(node, spans):
            yield node.start_byte, node.end_byte, f'getattr({node_text(owner)}, "{node_text(name)}", None)'


def _empties(nodes: list[ts.Node]) -> list[str]:
    """The empty value of each kind the function returns (`False` for a bool, `[]` for a list, ...), then
    `None`: a guard returns what the function's other returns do before it returns another type."""
    kinds = {"list": "[]", "list_comprehension": "[]", "dictionary": "{}", "dictionary_comprehension": "{}",
             "string": "''", "concatenated_string": "''", "tuple": "()", "integer": "0", "float": "0.0",
             "true": "False", "false": "False", "comparison_operator": "False", "not_operator": "False",
             "set": "set()", "set_comprehension": "set()"}
    found: list[str] = []
    for node in nodes:
        if node.type == "return_statement" and node.named_children:
            empty = kinds.get(node.named_children[0].type)
            if empty and empty not in found:
                found.append(empty)
    return [*found, "None"]
