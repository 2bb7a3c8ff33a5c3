"""What a small edit's kind says to the user and to risk.py: its family, told apart by where it edits (a loop's
bound) or what it makes the function return."""

from __future__ import annotations

import tree_sitter as ts

from greenloop.agent.repair.nodes import Edit, node_text, walk

LOOP_BOUND = "loop bound changed"
_ONE_STEP = ("bound", "comparison")  # edits of a loop header that keep its reach


def refined(kind: str, edit: Edit, definition: ts.Node) -> str:
    """A kind told apart by where or what it edits. An edit of a loop's header other than a step of one
    (`bound`, `comparison`) changes how far the loop goes: `n ** 0.5` to `n`,
    `len(a) - len(b)` to `len(a) + len(b)` (`loop bound changed (arithmetic)`). A `None` check that returns
    `None` where the function's returns give only other values returns another type."""
    start, end, new = edit
    if kind not in _ONE_STEP and _in_loop_header(definition, start, end):
        return f"{LOOP_BOUND} ({kind})"
    if kind == "none guard" and new.rstrip().endswith("return None") and _returns_only_values(definition):
        return "none guard returning another type"
    if kind == "none guard" and "is not None:" in new:
        return "none check skipping a statement"
    return kind


def shape_and_family(kind: str) -> tuple[str, str]:
    """`loop bound changed (arithmetic)` -> (`loop bound changed`, `arithmetic`); any other kind -> (kind, "")."""
    shape, _, family = kind.partition(" (")
    return shape, family.removesuffix(")")


def _in_loop_header(definition: ts.Node, start: int, end: int) -> bool:
    """The bytes lie in a `for` loop's iterable or a `while` loop's condition, outside a string: an edit of
    a literal's text (a pattern in `for m in re.finditer(PATTERN, html)`) changes what is matched, not how
    far the loop goes."""
    node = definition.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and node != definition:
        if node.type == "string":
            return False
        parent = node.parent
        if parent is not None and (
                (parent.type in ("for_statement", "for_in_statement") and node == parent.child_by_field_name("right"))
                or (parent.type == "while_statement" and node == parent.child_by_field_name("condition"))):
            return True
        node = parent
    return False


def _returns_only_values(definition: ts.Node) -> bool:
    """The function returns values, and none of its returns gives `None` (a `return None` or a bare `return`):
    a function that already returns `None` somewhere returns no other type for one more."""
    returns = [n for n in walk(definition) if n.type == "return_statement"]
    return bool(returns) and all(n.named_children and node_text(n.named_children[0]) != "None" for n in returns)
