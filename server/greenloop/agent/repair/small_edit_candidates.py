"""Small edits of one function, tried by the tests before any model is asked (template repair).

Many bugs are one token off: `<` for `<=`, `+ 1` too many, `and` for `or`, `max` for `min`, one
variable for another. Each such edit of the function the failure is
about is a candidate the sandbox can check in about a second, without a model call (the edit
operators of mutation-based repair: PraPR, TBar). The edits are found with tree-sitter on the
definition's own text, in the order below (the cheap, likely ones first), each as the whole
function in a code block so the function route's splice reads it like a model's reply.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator, Mapping

import tree_sitter as ts

from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.edit_kinds import refined
from greenloop.agent.repair.guard_edits import defaults, guards
from greenloop.agent.repair.nodes import (
    BLOCKS,
    Edit,
    in_header,
    is_binding,
    local_names,
    node_text,
    root_text,
    walk,
)
from greenloop.agent.repair.pattern_edits import pattern_edits
from greenloop.agent.repair.splice import Target, definition_node
from greenloop.retrieval import language_of

_COMPARE = ("<", "<=", ">", ">=", "==", "!=")
_STRICT = ("===", "!==")
# a comparison's likely replacements first: its negation, then the bound one off (relational operator
# replacement in mutation testing; `==` for `!=` is the negated condition, `<` for `<=` the off-by-one)
_LIKELY = {"==": ("!=",), "!=": ("==",), "<": ("<=", ">="), "<=": ("<", ">"), ">": (">=", "<="), ">=": (">", "<"),
           "===": ("!==",), "!==": ("===",)}
_ARITH = {"python": ("+", "-", "*", "/", "//", "%"), "": ("+", "-", "*", "/", "%")}
_AUGMENTED = ("+=", "-=", "*=", "/=")
_TEXT_OPS = ("+", "*", "%")  # what python's str does with an operand on its right: any other raises TypeError
_LOGIC = {"python": ("and", "or"), "": ("&&", "||")}
_BINARY = {  # nodes whose anonymous child is an operator a swap may change
    "binary_operator", "comparison_operator", "boolean_operator", "binary_expression",
    "augmented_assignment", "augmented_assignment_expression", "compound_assignment_expr",
}
_INTEGERS = {"integer", "number", "integer_literal"}
_IDENTIFIERS = {"identifier", "property_identifier", "field_identifier"}
_PAIRS = dict(  # a function or method often called where its twin was meant
    p for a, b in (("min", "max"), ("any", "all"), ("upper", "lower"), ("isupper", "islower"),
                   ("startswith", "endswith"), ("floor", "ceil"), ("append", "extend"), ("find", "rfind"),
                   ("index", "rindex"), ("lstrip", "rstrip"), ("sort", "reverse"), ("isdigit", "isalpha"),
                   ("toUpperCase", "toLowerCase"), ("push", "unshift"), ("pop", "shift"))
    for p in ((a, b), (b, a))
)
_BOUNDED = {"range", "slice", "substring", "substr", "islice"}
_ATOMS = {"identifier", "call", "attribute", "subscript", "call_expression", "member_expression",
          "subscript_expression", "parenthesized_expression", "field_expression"}
_ORDERED = {"-", "/", "//", "%", "**", "+", "in", "not in", "instanceof"}  # `a - b` is not `b - a` (nor `+` on text)
_IDENTITY = {"1": ("*", "/", "//", "**"), "0": ("+", "-")}  # x op this == x
_DECIMAL = re.compile(r"\d+")


def small_edit_replies(source: str, target: Target, limit: int, hot: Collection[int] = (),
            scores: Mapping[int, float] | None = None) -> list[str]:
    """The replies of `small_edits`, without their kinds."""
    return [reply for reply, _ in small_edits(source, target, limit, hot, scores)]


def small_edits(source: str, target: Target, limit: int, hot: Collection[int] = (),
                scores: Mapping[int, float] | None = None, off: Collection[str] = ()) -> list[tuple[str, str]]:
    """Up to `limit` (reply, kind) pairs, each reply the target function with one small edit, in a code block.

    `hot`: lines of the file (1-based) where the failure went through the function (its traceback's
    frames); edits on them come first. `scores`: how suspicious each line is (Ochiai over the
    coverage pass: run by the failing tests, not by the passing ones); then edits of the more
    suspicious statements come first. Each kind keeps its order among equals. `off`: families not tried
    (`loop.edits_off`)."""
    if limit <= 0 or language_of(target.path) is None:
        return []
    tree = parse(target.path, source)
    if tree is None or tree.root_node.has_error:
        return []
    node = definition_node(tree, target.name, target.start_line) or definition_node(tree, target.name)
    if node is None:
        return []
    data = source.encode("utf-8")
    first = data.rfind(b"\n", 0, node.start_byte) + 1  # from the start of its line, with its indentation
    text = data[first : node.end_byte]
    language = language_of(target.path) or ""
    out: list[tuple[str, str]] = []
    seen = {text}
    spans = _line_spans(data, hot)
    edits = _ordered(list(_edits(node, language, spans, off)), spans, _spread(node, scores or {}), data)
    for kind, (start, end, new) in edits:
        before, after = text[: start - first], text[end - first :]
        edited = before + _spaced(before[-1:], new.encode("utf-8"), after[:1]) + after
        if edited in seen:
            continue
        seen.add(edited)
        if _broken(target.path, data[:first] + edited + data[node.end_byte :]):
            continue
        out.append((_reply(edited.decode("utf-8", "replace"), target.path), kind))
        if len(out) >= limit:
            break
    return out


def _line_spans(data: bytes, lines: Collection[int]) -> list[tuple[int, int]]:
    """The byte span of each of `lines` (1-based) in `data`."""
    spans, starts = [], [0, *(i + 1 for i, b in enumerate(data) if b == 10)] if lines else []
    for line in sorted(set(lines)):
        if 1 <= line <= len(starts):
            end = data.find(b"\n", starts[line - 1])
            spans.append((starts[line - 1], len(data) if end < 0 else end + 1))
    return spans


def _ordered(edits: list[tuple[str, Edit]], spans: list[tuple[int, int]], scores: Mapping[int, float],
             data: bytes) -> list[tuple[str, Edit]]:
    """Edits that touch a hot line first, then by the most suspicious line they touch (a stable sort:
    each kind keeps its order among equals)."""
    if not spans and not scores:
        return edits
    starts = [0, *(i + 1 for i, b in enumerate(data) if b == 10)]

    def key(pair: tuple[str, Edit]) -> tuple[bool, float]:
        start, end, _ = pair[1]
        cold = not any(start < last and (end > first or start >= first) for first, last in spans)
        lines = range(bisect.bisect_right(starts, start), bisect.bisect_right(starts, max(start, end - 1)) + 1)
        return cold, -round(max((scores.get(line, 0.0) for line in lines), default=0.0), 3)

    return sorted(edits, key=key)


def _spread(definition: ts.Node, scores: Mapping[int, float]) -> dict[int, float]:
    """Each line's score, a statement's best over all its lines (coverage names one line of a statement
    that spans several: the rest of a long call or a pattern in a triple-quoted string are as suspect)."""
    if not scores:
        return {}
    low, high = definition.start_point[0] + 1, definition.end_point[0] + 1
    out = {line: value for line, value in scores.items() if low <= line <= high}
    for node in walk(definition):
        if node.parent is None or node.parent.type not in BLOCKS or node.type in ("comment", "{", "}"):
            continue
        block = next((c for c in node.children if c.type in BLOCKS), None)
        last = node.end_point[0] if block is None else max(node.start_point[0], block.start_point[0] - 1)
        lines = range(node.start_point[0] + 1, last + 2)
        best = max((scores.get(line, 0.0) for line in lines), default=0.0)
        for line in lines if best else ():
            out[line] = max(out.get(line, 0.0), best)
    return out


def _spaced(left: bytes, new: bytes, right: bytes) -> bytes:
    """`if(a) and b` -> `if b`, not `ifb`: a space where two words would run together."""
    if new[:1].isalnum() and (left.isalnum() or left == b"_"):
        new = b" " + new
    if new[-1:].isalnum() and (right.isalnum() or right == b"_"):
        new = new + b" "
    return new


def _broken(path: str, source: bytes) -> bool:
    tree = parse(path, source.decode("utf-8", "replace"))
    return tree is None or tree.root_node.has_error


def _edits(definition: ts.Node, language: str, spans: list[tuple[int, int]],
           off: Collection[str] = ()) -> Iterator[tuple[str, Edit]]:
    """Every edit with its kind (risk.py judges kinds), in order: operators, literals, bounds,
    twins, guards, defaults, patterns, dropped parts, local names."""
    nodes = list(walk(definition))
    body = [n for n in nodes if n is not definition and not in_header(n, definition)]
    lang = "python" if language == "python" else ""
    kinds = (
        ("comparison", _swaps(body, _COMPARE, _BINARY)), ("comparison", _swaps(body, _STRICT, _BINARY)),
        ("logic operator", _swaps(body, _LOGIC[lang], _BINARY)),
        ("logic operator everywhere", _all_swapped(body, _LOGIC[lang])),
        ("constant", _integers(body)),
        ("bound", _shifted(body)),
        ("arithmetic", _swaps(body, _ARITH[lang], _BINARY, text_rules=bool(lang))),
        ("arithmetic", _swaps(body, _AUGMENTED, _BINARY)),
        ("operands swapped", _swapped_operands(body)),
        ("twin called", _twins(body)),
        ("none guard", guards(definition, body, language, spans)),
        ("attribute default", defaults(body, language, spans)),
        ("regex", pattern_edits(body)),
        ("term dropped", _dropped_operands(body)),
        ("local name", _names(definition, body)),
    )
    for kind, edits in kinds:
        for edit in edits if kind not in off else ():
            yield refined(kind, edit, definition), edit


def _swaps(nodes: list[ts.Node], group: tuple[str, ...], parents: set[str],
           text_rules: bool = False) -> Iterator[Edit]:
    """Each operator of `group` made each other one. `text_rules` (python): after text, only what str can do
    with the operand on the right (`_str_takes`): `' ' / 4` or `' ' % 4` raises TypeError whatever the
    values, so it is never the fix (PySnooper's `' ' * 4 * depth` went green as `' ' / 4 * depth`, then as
    `' ' % 4 * depth`: the raise skipped the line the test did not want)."""
    for node in nodes:
        if node.is_named or node.parent is None or node.parent.type not in parents:
            continue
        text = node_text(node)
        if text in group:
            right = node.parent.child_by_field_name("right")
            same = _IDENTITY.get(node_text(right) if right is not None else "", ())  # `x * 1`: the dropped term's edit
            likely = [o for o in _LIKELY.get(text, ()) if o in group]
            others = [*likely, *(o for o in group if o not in likely)]
            if text_rules and _text(node.parent.child_by_field_name("left")):
                others = [o for o in others if _str_takes(node, o)]
            yield from ((node.start_byte, node.end_byte, other) for other in others if other not in (text, *same))


def _text(node: ts.Node | None) -> bool:
    """The expression is python text by its syntax alone: a string literal, or text `+`, `*` or `%` something."""
    if node is None:
        return False
    if node.type in ("string", "concatenated_string"):
        return True
    if node.type == "parenthesized_expression":
        return _text(node.named_children[0] if node.named_children else None)
    operator = node.child_by_field_name("operator")
    return (node.type == "binary_operator" and operator is not None and node_text(operator) in _TEXT_OPS
            and _text(node.child_by_field_name("left")))


def _str_takes(operator: ts.Node, other: str) -> bool:
    """Whether python's str could take `other` in the operator's place, read as the swapped source parses
    (`' ' * 4 * name` made `' ' + 4 * name` is `' ' + (4 * name)`): after text, `+` takes another text, `*` an
    int, `%` the values of a format; `+` a number, `*` a text, `%` a literal after text with no `%` in it,
    and every other operator raise TypeError whatever the values."""
    start = operator.start_byte
    source = root_text(operator)
    try:
        swapped = (source[:start] + other.encode() + source[operator.end_byte:]).decode("utf-8")
    except UnicodeDecodeError:
        return True
    tree = parse("swapped.py", swapped)
    found = tree.root_node.descendant_for_byte_range(start, start + len(other)) if tree is not None else None
    expression = found.parent if found is not None and node_text(found) == other else None
    if expression is None or expression.type != "binary_operator":
        return True  # read otherwise: nothing is known
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    if not _text(left):
        return True
    if other == "+":
        return not _never_text(right)
    if other == "*":
        return not _text(right)
    return other == "%" and not (_plain(left) and (_never_text(right) or _text(right)))


def _never_text(node: ts.Node | None) -> bool:
    """The expression cannot be text by its syntax: a number, or `-`, `/`, `//`, `**`, `+` a number, or
    two such multiplied."""
    if node is None:
        return False
    if node.type in ("integer", "float"):
        return True
    if node.type in ("parenthesized_expression", "unary_operator"):
        return bool(node.named_children) and _never_text(node.named_children[-1])
    if node.type != "binary_operator":
        return False
    operator = node.child_by_field_name("operator")
    op = node_text(operator) if operator is not None else ""
    sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
    return (op in ("-", "/", "//", "**") or (op == "+" and any(s is not None and s.type in ("integer", "float")
                                                              for s in sides))
            or (op == "*" and all(_never_text(s) for s in sides)))


def _plain(node: ts.Node | None) -> bool:
    """Text with no `%` spec to format: a string literal (not an f-string) without `%`, in parentheses or repeated
    by `*`."""
    if node is None:
        return False
    if node.type == "string":
        return not any(c.type == "interpolation" for c in node.named_children) and "%" not in node_text(node)
    if node.type == "parenthesized_expression":
        return bool(node.named_children) and _plain(node.named_children[0])
    operator = node.child_by_field_name("operator")
    return (node.type == "binary_operator" and operator is not None and node_text(operator) == "*"
            and _plain(node.child_by_field_name("left")))


def _all_swapped(nodes: list[ts.Node], group: tuple[str, ...]) -> Iterator[Edit]:
    """Every `and` an `or` at once (each operator of the group used twice or more, for each other one):
    the same misuse throughout a condition, which one edit at a time never makes pass."""
    found: dict[str, list[ts.Node]] = {}
    for node in nodes:
        if not node.is_named and node.parent is not None and node.parent.type in _BINARY and node_text(node) in group:
            found.setdefault(node_text(node), []).append(node)
    for text, same in found.items():
        if len(same) > 1:
            source = root_text(same[0])
            for other in group:
                if other != text:
                    yield _many(source, [(n.start_byte, n.end_byte, other) for n in same])


def _integers(nodes: list[ts.Node]) -> Iterator[Edit]:
    for node in nodes:
        text = node_text(node)
        if node.type in _INTEGERS and _DECIMAL.fullmatch(text):
            value = int(text)
            for other in dict.fromkeys((value + 1, value - 1, 0 if value else 1)):
                if other >= 0 and not (other == 0 and _term(node)):  # `x + 0`: the dropped term says it better
                    yield node.start_byte, node.end_byte, str(other)


def _term(node: ts.Node) -> bool:
    """A term of a sum or a difference."""
    parent = node.parent
    operator = parent.child_by_field_name("operator") if parent is not None else None
    return operator is not None and node_text(operator) in ("+", "-")


def _shifted(nodes: list[ts.Node]) -> Iterator[Edit]:
    """One more or one less: a bound of `range`, a slice, a subscript (`range(n)` -> `range(n + 1)`)."""
    for node in nodes:
        parts: list[ts.Node] = []
        if node.type in ("call", "call_expression"):
            function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            name = node_text(function).rsplit(".", 1)[-1] if function is not None else ""
            if name in _BOUNDED and arguments is not None:
                parts = [a for a in arguments.named_children if a.type not in ("keyword_argument", "comment")]
        elif node.type in ("subscript", "subscript_expression"):
            index = node.child_by_field_name("subscript") or node.child_by_field_name("index")
            parts = [index] if index is not None and index.type != "slice" else []
        elif node.type == "slice":
            parts = list(node.named_children)
        for part in parts:
            if part.type in _INTEGERS or part.type == "unary_operator":
                continue  # a literal's neighbours are _integers' edits
            text = node_text(part) if part.type in _ATOMS else f"({node_text(part)})"
            yield from ((part.start_byte, part.end_byte, f"{text} {step}") for step in ("+ 1", "- 1"))


def _many(source: bytes, edits: list[Edit]) -> Edit:
    """Several edits as one: the span from the first to the last, with each edit made in it."""
    edits = sorted(edits)
    start, end = edits[0][0], edits[-1][1]
    out, at = b"", start
    for first, last, new in edits:
        out += source[at:first] + new.encode("utf-8")
        at = last
    return start, end, (out + source[at:end]).decode("utf-8", "replace")


def _swapped_operands(nodes: list[ts.Node]) -> Iterator[Edit]:
    """`x in s` -> `s in x`, `a - b` -> `b - a`: the two sides of an operator whose order counts."""
    for node in nodes:
        if node.type not in _BINARY or node.type.startswith(("augmented", "compound")):
            continue
        operands = node.named_children
        if len(operands) != 2 or any(c.type == "comment" for c in operands):
            continue
        left, right = operands
        source = root_text(node)
        operator = source[left.end_byte : right.start_byte]
        if " ".join(operator.decode("utf-8", "replace").split()) in _ORDERED and node_text(left) != node_text(right):
            yield node.start_byte, node.end_byte, node_text(right) + operator.decode("utf-8", "replace") + node_text(left)


def _twins(nodes: list[ts.Node]) -> Iterator[Edit]:
    for node in nodes:
        if node.type in _IDENTIFIERS and (twin := _PAIRS.get(node_text(node))):
            yield node.start_byte, node.end_byte, twin


def _dropped_operands(nodes: list[ts.Node]) -> Iterator[Edit]:
    """`a + 1` -> `a` or `1`; `x and y` -> `x` or `y` (a term or a condition too many)."""
    for node in nodes:
        if node.type not in ("binary_operator", "boolean_operator", "binary_expression"):
            continue
        for side in ("left", "right"):
            part = node.child_by_field_name(side)
            if part is None:
                continue
            whole = node.parent if node.parent is not None and node.parent.type == "parenthesized_expression" else None
            if whole is not None and part.type in _ATOMS:  # `(len(v) + 1)` -> `len(v)`, not `(len(v))`
                yield whole.start_byte, whole.end_byte, node_text(part)
            else:
                yield node.start_byte, node.end_byte, node_text(part)


def _names(definition: ts.Node, nodes: list[ts.Node]) -> Iterator[Edit]:
    """One local name used (or assigned) where another was meant (parameters and names the function binds)."""
    local = local_names(definition)
    if len(local) < 2:
        return
    for node in nodes:
        if node.type != "identifier" or node_text(node) not in local or (is_binding(node) and not _updated(node)):
            continue
        yield from ((node.start_byte, node.end_byte, other) for other in local if other != node_text(node))


def _updated(node: ts.Node) -> bool:
    """The name an assignment or `x += ...` changes (`max_depth -= 1` where `depth` was meant); a loop's
    variable or one name of a tuple stays what it is."""
    parent = node.parent
    return parent is not None and parent.type in ("assignment", "augmented_assignment") and (
        parent.child_by_field_name("left") == node)


def _reply(text: str, path: str) -> str:
    lines = text.split("\n")
    indent = len(lines[0]) - len(lines[0].lstrip(" \t"))
    body = "\n".join(row[indent:] if row[:indent].strip() == "" else row for row in lines)
    fence = "```" + (language_of(path) or "")
    return f"{fence}\n{body}\n```\n"
