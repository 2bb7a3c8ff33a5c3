"""One file's source -> its definitions and references (tree-sitter tags query).

`extract` is a pure function of (path, bytes) so it can run in a worker
process; the index caches its result by content hash.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from sys import intern

import tree_sitter as ts

from greenloop.retrieval.languages import language_of, parser, tags_query
from greenloop.retrieval.model import Definition, FileSymbols

_CONTAINERS = {"class", "interface", "impl"}
# Nodes that wrap a definition and belong to its range (decorators, `const x = () => ...`, `export`).
_WRAPPERS = {"decorated_definition", "lexical_declaration", "variable_declaration", "export_statement"}
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z_][\w-]*")
_SIGNATURE_CHARS = 240


@dataclass
class _RawDef:
    kind: str
    name: str
    node: ts.Node
    start_byte: int
    end_byte: int
    signature_start: int
    refs: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    parent: _RawDef | None = None
    symbol: str = ""


def extract(path: str, data: bytes) -> FileSymbols:
    """Definitions (with ranges, signatures, own references) and module-level references of a file."""
    return extract_as(language_of(path), path, data)


def extract_as(language: str | None, path: str, data: bytes) -> FileSymbols:
    """`extract` with the file's grammar already known (a worker process is told it, see `worker`)."""
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if language is None:
        return FileSymbols(path=path, language=None, line_count=lines)
    tree = parser(language).parse(data)
    raw, refs, imports, writes = _captures(tree, language, data)
    _nest(raw)
    module_refs = _assign_refs(raw, refs)
    _assign_writes(raw, writes)
    definitions = tuple(_definition(path, item, data) for item in raw)
    note = "syntax errors: indexed what parsed" if tree.root_node.has_error else ""
    return FileSymbols(
        path=path,
        language=language,
        line_count=lines,
        definitions=definitions,
        module_refs=tuple(module_refs),
        imports=tuple(imports),
        has_errors=tree.root_node.has_error,
        note=note,
    )


def _captures(
    tree: ts.Tree, language: str, data: bytes
) -> tuple[list[_RawDef], list[tuple[int, str, bool]], list[str], list[tuple[int, str]]]:
    # One pass of the query, all captures at once: no Python per match (references are most of them).
    found = ts.QueryCursor(tags_query(language)).captures(tree.root_node)
    refs: list[tuple[int, str, bool]] = []  # (position, name, is a call)
    kinds: dict[ts.Node, str] = {}  # definition node -> its kind
    imports: list[str] = []
    for capture, nodes in found.items():
        if capture.startswith("reference."):
            call = capture == "reference.call"
            # `_text` written out: this line runs for most captures
            refs += [(n.start_byte, intern(data[n.start_byte : n.end_byte].decode("utf-8", "replace")), call)
                     for n in nodes]
        elif capture.startswith("definition."):
            kinds.update(dict.fromkeys(nodes, capture.split(".", 1)[1]))
        elif capture == "import":
            for node in sorted(nodes, key=_position):  # a capture's nodes come as a set
                imports.extend(_WORD.findall(data[node.start_byte : node.end_byte].decode("utf-8", "replace")))
    named = [(owner, name) for name in found.get("name", ()) if (owner := _owner(name, kinds)) is not None]
    raw: dict[tuple[int, int], _RawDef] = {}
    # in document order, as matches came: of definitions sharing a range (`const a = () => 1, b = ...`)
    # the first one stands for it
    for node, name_node in sorted(named, key=lambda pair: _position(pair[0])):
        outer = _outer(node)
        key = (outer.start_byte, outer.end_byte)
        if key not in raw:
            head = node.start_byte if outer.type == "decorated_definition" else outer.start_byte
            raw[key] = _RawDef(kinds[node], _text(name_node, data), node, outer.start_byte, outer.end_byte, head)
    refs.sort()
    definitions = sorted(raw.values(), key=lambda d: (d.start_byte, -d.end_byte))
    writes = sorted((n.start_byte, f"{_receiver(n, data)}.{_text(n, data)}") for n in found.get("write", ()))
    return definitions, refs, list(dict.fromkeys(imports)), writes


def _owner(name: ts.Node, definitions: dict[ts.Node, str]) -> ts.Node | None:
    """The definition a @name names: the nearest definition above it (its parent, or its
    grandparent through `a.b = ...` and `impl Type<T>`); no definition lies in between."""
    node = name.parent
    while node is not None and node not in definitions:
        node = node.parent
    return node


def _position(node: ts.Node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


def _text(node: ts.Node, data: bytes) -> str:
    # interned: equal names share one object (less memory, smaller pickles from workers)
    return intern(data[node.start_byte : node.end_byte].decode("utf-8", "replace"))


def _outer(node: ts.Node) -> ts.Node:
    """The node whose range a definition covers: decorators and `const f = ...` included."""
    while node.parent is not None and node.parent.type in _WRAPPERS:
        node = node.parent
    return node


def _nest(raw: list[_RawDef]) -> None:
    """Set parents, qualified symbols and method kinds (input sorted by start, outermost first)."""
    stack: list[_RawDef] = []
    for item in raw:
        while stack and stack[-1].end_byte <= item.start_byte:
            stack.pop()
        item.parent = stack[-1] if stack else None
        if item.parent is not None:
            item.symbol = f"{item.parent.symbol}.{item.name}"
            if item.kind == "function" and item.parent.kind in _CONTAINERS:
                item.kind = "method"
        else:
            item.symbol = item.name
        stack.append(item)


def _innermost(raw: list[_RawDef], positions: Iterable[int]) -> Iterator[_RawDef | None]:
    """The innermost definition around each position, in ascending order (None at module level)."""
    stack: list[_RawDef] = []
    index = 0
    for position in positions:
        while index < len(raw) and raw[index].start_byte <= position:
            while stack and stack[-1].end_byte <= raw[index].start_byte:
                stack.pop()
            stack.append(raw[index])
            index += 1
        while stack and stack[-1].end_byte <= position:
            stack.pop()
        yield stack[-1] if stack else None


def _assign_refs(raw: list[_RawDef], refs: list[tuple[int, str, bool]]) -> list[str]:
    """Give each reference to its innermost definition; return the module-level rest."""
    module: list[str] = []
    for (_, name, call), owner in zip(refs, _innermost(raw, (r[0] for r in refs)), strict=True):
        if owner is None:
            module.append(name)
            continue
        owner.refs.append(name)
        if call:
            owner.calls.append(name)
    return module


_NAMES = {"identifier", "property_identifier", "field_identifier", "this", "self"}
_MEMBERS = {"attribute", "member_expression", "field_expression"}


def _receiver(write: ts.Node, data: bytes) -> str:
    """The last name of the object an attribute write is on (`self`, `thread_global`; `config` for `self.config.x`):
    the member's object, `setattr`'s first argument, or the object whose `__dict__` is written."""
    parent = write.parent
    target: ts.Node | None = None
    if parent is not None and parent.type in _MEMBERS:
        target = parent.child_by_field_name("object") or parent.child_by_field_name("value")
    elif parent is not None and parent.type == "string" and parent.parent is not None:
        holder = parent.parent  # setattr's / setdefault's arguments, or `__dict__[...]`
        call = holder.parent if holder.type == "argument_list" else None
        function = call.child_by_field_name("function") if call is not None else None
        if function is not None and function.type == "identifier":
            target = holder.named_children[0] if holder.named_children else None
        else:
            target = function.child_by_field_name("object") if function is not None else holder.child_by_field_name("value")
    if target is not None and target.type in _MEMBERS and _member_name(target, data) == "__dict__":
        target = target.child_by_field_name("object")
    if target is None:
        return ""
    return _text(target, data) if target.type in _NAMES else _member_name(target, data)


def _member_name(node: ts.Node, data: bytes) -> str:
    name = node.child_by_field_name("attribute") or node.child_by_field_name("property") or node.child_by_field_name("field")
    return _text(name, data) if name is not None else ""


def _assign_writes(raw: list[_RawDef], writes: list[tuple[int, str]]) -> None:
    """Give each attribute write (`@write`) to its innermost definition; module-level writes are dropped."""
    for (_, name), owner in zip(writes, _innermost(raw, (w[0] for w in writes)), strict=True):
        if owner is not None:
            owner.writes.append(name)


def _definition(path: str, item: _RawDef, data: bytes) -> Definition:
    start = item.node.start_point.row + 1
    outer_start = start - data.count(b"\n", item.start_byte, item.node.start_byte)
    end = item.node.end_point.row + 1
    if item.node.end_point.column == 0 and end > start:
        end -= 1
    return Definition(
        path=path,
        name=item.name,
        symbol=item.symbol,
        kind=item.kind,
        start_line=outer_start,
        end_line=end,
        signature=_signature(item.node, item.signature_start, data),
        refs=tuple(dict.fromkeys(item.refs)),
        calls=tuple(dict.fromkeys(item.calls)),
        writes=tuple(dict.fromkeys(item.writes)),
        parent=item.parent.symbol if item.parent else None,
    )


def _signature(node: ts.Node, start: int, data: bytes) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    if body is not None and body.start_byte > start:
        text = data[start : body.start_byte]
    else:
        text = data[start : node.end_byte].split(b"\n", 1)[0]
    signature = _SPACE.sub(" ", text.decode("utf-8", "replace")).strip().rstrip("{").rstrip()
    if len(signature) > _SIGNATURE_CHARS:
        signature = signature[: _SIGNATURE_CHARS - 1] + "…"
    return signature
