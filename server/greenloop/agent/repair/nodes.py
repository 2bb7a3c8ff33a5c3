"""Tree-sitter nodes as the small edits read them: walking, text, the names a function binds, reads."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

Edit = tuple[int, int, str]  # start byte, end byte (of the file's text), replacement
BLOCKS = {"block", "statement_block"}
NOT_STATEMENTS = {"comment", "pass_statement", "{", "}", "return_statement"}
PARAMETER_PARENTS = {
    "parameters", "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern", "formal_parameters",
}


def read(node: ts.Node) -> bool:
    """An identifier read as a variable (`x += 1` reads it too): not bound here, not a call's callee, an
    attribute's name or a keyword."""
    parent = node.parent
    if node.type != "identifier" or parent is None or (is_binding(node) and parent.type != "augmented_assignment"):
        return False
    if parent.type == "call" and parent.child_by_field_name("function") == node:
        return False
    return not member(node)


def member(node: ts.Node) -> bool:
    """`x.name` or `f(name=...)`: a name looked up on something, not a variable."""
    parent = node.parent
    return parent is not None and (
        (parent.type == "attribute" and parent.child_by_field_name("attribute") == node)
        or (parent.type == "keyword_argument" and parent.child_by_field_name("name") == node))


def root(node: ts.Node) -> ts.Node:
    while node.parent is not None:
        node = node.parent
    return node


def local_names(definition: ts.Node) -> list[str]:
    names: dict[str, None] = {}
    parameters = definition.child_by_field_name("parameters")
    for node in walk(parameters) if parameters is not None else ():
        if node.type == "identifier" and node.parent is not None and (
            node.parent.type in PARAMETER_PARENTS or node.parent.child_by_field_name("name") == node
            or node.parent.child_by_field_name("pattern") == node
        ):
            names.setdefault(node_text(node), None)
    for node in walk(definition):
        if node.type == "identifier" and is_binding(node):
            names.setdefault(node_text(node), None)
    return list(names)


def is_binding(node: ts.Node) -> bool:
    """The name is what an assignment, a for loop or a declaration binds."""
    parent = node.parent
    if parent is None:
        return False
    for field in ("left", "name"):
        bound = parent.child_by_field_name(field)
        if bound is not None and bound.id == node.id and parent.type in (
            "assignment", "for_statement", "for_in_statement", "variable_declarator", "let_declaration",
            "augmented_assignment", "named_expression",
        ):
            return True
    return parent.type in ("pattern_list", "tuple_pattern") and parent.parent is not None and (
        parent.parent.type in ("assignment", "for_statement"))


def in_header(node: ts.Node, definition: ts.Node) -> bool:
    """Part of the definition's name, parameters or decorators: not the code a bug is in."""
    body = definition.child_by_field_name("body")
    if body is None and definition.type == "decorated_definition":
        inner = definition.child_by_field_name("definition")
        body = inner.child_by_field_name("body") if inner is not None else None
    return body is not None and node.start_byte < body.start_byte


def walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def node_text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def root_text(node: ts.Node) -> bytes:
    return root(node).text or b""
