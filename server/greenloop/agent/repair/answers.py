"""Reading the model's answer to a value question: the value it gives, an expression to compute, and the side it picks.

The replies of the small models are not clean values. The answer is the reply's last code block,
else LaTeX's `\\boxed{}`, else an inline value, else the last line's math, quoted string or single
bare number; written as the check (`f(x) == 3`), what the call is compared to. A number matches a
side exactly, or rounded to the decimals it shows, or, matching neither, within 5% of one side
and ten times as far from the other. An answer that is arithmetic on literals is an expression
for the sandbox to compute (verdicts.py asks, settle.py computes).
"""

from __future__ import annotations

import ast
import re
import textwrap

from greenloop.agent.repair.splice import code_blocks
from greenloop.agent.repair.value_conflict import Conflict, Side, value_of

_BOXED = re.compile(r"\\boxed\{(.+?)\}(?:\s|\\\)|\$|\.|$)")
_INLINE = re.compile(r"`([^`\n]+)`")
_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
# what an answer's expression may name: arithmetic on the call's arguments, never the project's code
_COMPUTE_NAMES = frozenset({
    "abs", "all", "any", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float", "int", "len", "list",
    "map", "math", "max", "min", "ord", "pow", "range", "reversed", "round", "set", "sorted", "str", "sum",
    "tuple", "zip", "True", "False", "None",
})
# in prose: LaTeX's inline math or a quoted string; else a bare number or exception name
_MARKED = re.compile(r"""\\\((.+?)\\\)|("[^"]*"|(?<!\w)'[^']*'(?!\w))""")
_BARE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)|\b[A-Z]\w*(?:Error|Exception)\b")


def expression(reply: str, conflict: Conflict) -> str | None:
    """The reply's answer when it is a python expression to compute (`(-10) * 9 / 5 + 32`): literals,
    operators, comprehensions, a few builtins and `math`, and no call of the function in question; else None."""
    answer = _answer(reply, conflict.call)
    if answer is None or value_of(answer) is not None or len(answer) > 400:
        return None
    source = _inlined(answer, conflict.call) or answer.removeprefix("return ").strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return None
    # a comprehension's own variables may be named: fizzbuzz(100) as one line, not a hundred values
    bound = {n.id for c in ast.walk(tree) if isinstance(c, ast.comprehension)
             for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in _COMPUTE_NAMES and node.id not in bound:
            return None
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            return None
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return None
    return source


def _inlined(answer: str, call: str) -> str | None:
    """A reply that writes the function as one `return <expression>` (the 1.5B model's fizzbuzz formula:
    `def fizzbuzz(n): return [... for i in range(1, n + 1)]`) as that expression with the call's literal
    arguments in place of its parameters; None for anything else. What may be computed is then checked
    as for any expression: the function's own name is not among the names allowed."""
    try:
        tree = ast.parse(textwrap.dedent(answer))
        called = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(function := tree.body[0], ast.FunctionDef) \
            or not isinstance(called, ast.Call):
        return None
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    params = function.args
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None or params.vararg \
            or params.kwarg or params.kwonlyargs or params.posonlyargs or called.keywords \
            or len(called.args) != len(params.args) or any(isinstance(a, ast.Starred) for a in called.args):
        return None
    values = {p.arg: a for p, a in zip(params.args, called.args, strict=True)}

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return values.get(node.id, node) if isinstance(node.ctx, ast.Load) else node

    shadowed = {n.id for c in ast.walk(body[0]) if isinstance(c, ast.comprehension)
                for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    if shadowed & values.keys():
        return None  # a comprehension that rebinds a parameter: substituting would change its meaning
    return ast.unparse(Inline().visit(body[0].value))


def verdict(reply: str, conflict: Conflict, computed: str | None = None) -> Side | None:
    """Which side the reply's value agrees with: the code's, the check's, or neither (None). `computed` is the
    value of the reply's expression (`expression`) as python printed it, when the sandbox worked it out."""
    answer = computed if computed is not None else _answer(reply, conflict.call)
    if answer is None:
        return None
    if conflict.raised:
        named = _EXCEPTION.findall(answer)
        if conflict.got in named:
            return "code"
        return "test" if _same(value_of(answer), value_of(conflict.want)) else None
    text = answer.removeprefix("return ").strip()
    value = value_of(text)
    if value is None:
        return None
    sides: list[tuple[Side, object]] = [("code", value_of(conflict.got)), ("test", value_of(conflict.want))]
    exact = [side for side, v in sides if _same(value, v)]
    # the model rounds its arithmetic ("-17.78" for -17.777...): a match to the answer's own decimals
    # counts when no side matches exactly, and decides only when it picks out one side; else a number
    # close to one side and far from the other (its sum slightly off) picks that side. Not a computed
    # value: python's sums are exact, so one near a side is a wrong formula (`-14 + 40 / 9` = -9.56 for
    # the check's -10, where (-14 - 32) * 5 / 9 gives the code's -25.56: the bench at bf93d33)
    close = _closest(value, sides) if computed is None else []
    near = exact or [side for side, v in sides if _rounds_to(v, text)] or close or _disputed(value, sides)
    return near[0] if len(near) == 1 else None


def _disputed(value: object, sides: list[tuple[Side, object]]) -> list[Side]:
    """The side a list or dict answer agrees with where the two sides differ, when it has their shape (the
    same length, the same keys) and agrees with one side at every such place: the 1.5B model's fizzbuzz(12)
    was wrong in its last item, and right in the 9th, the one item the code and the check disputed."""
    shaped = [_items(v) for v in (value, *(v for _, v in sides))]
    answer, code, test = shaped
    if answer is None or code is None or test is None or not answer.keys() == code.keys() == test.keys():
        return []
    places = [k for k in code if not _same(code[k], test[k])]
    by_side: list[tuple[Side, dict[object, object]]] = [("code", code), ("test", test)]
    return [side for side, of in by_side if places and all(_same(answer[k], of[k]) for k in places)]


def _items(value: object) -> dict[object, object] | None:
    """A list as its items by position, a dict as itself; anything else None."""
    if isinstance(value, list):
        return dict(enumerate(value))
    return dict(value) if isinstance(value, dict) else None


def _closest(value: object, sides: list[tuple[Side, object]]) -> list[Side]:
    """The one side a number that matches neither is close to (within 5%) while ten times as far from the
    other: the 1.5B model's "-46 * 5/9 = -25" for the code's -25.56 against the check's -10."""
    if not (isinstance(value, (int, float)) and _number(value) and all(_number(v) for _, v in sides)):
        return []
    (near, side), (far, _) = sorted((abs(value - v), s) for s, v in sides)  # type: ignore[operator]
    return [side] if near <= 0.05 * max(1.0, abs(value)) and far >= 10 * near else []


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _answer(reply: str, call: str) -> str | None:
    """The reply's value: its last code block, else LaTeX's boxed value, else its last `x` that is a value,
    else from its last line of prose the last inline math or quoted string ("is \\(-173.15\\)", "the
    numeral "MMMM""), or its one number or exception name that the call does not hold."""
    blocks = [b.strip() for b in code_blocks(reply) if b.strip()] if "```" in reply else []
    if blocks:
        return _compared_to(blocks[-1], call) or blocks[-1]
    spans = [*_BOXED.findall(reply)] or [s for s in _INLINE.findall(reply) if s.strip() != call and _answers(s)]
    if spans:
        return str(spans[-1]).strip()
    lines = [row for row in reply.strip().splitlines() if row.strip()]
    last = lines[-1] if lines else ""
    marked = [m.group(1) or m.group(2) for m in _MARKED.finditer(last)]
    marked = [s.strip() for s in marked if _answers(s.strip())]
    if marked:
        return marked[-1]
    bare = {m.group(0) for m in _BARE.finditer(last)} - {m.group(0) for m in _BARE.finditer(call)}
    return bare.pop() if len(bare) == 1 else None


def _compared_to(answer: str, call: str) -> str | None:
    """In an answer written as the check (`[assert] from_roman('IX') == 9`), what the call is compared to."""
    try:
        tree, target = ast.parse(answer), ast.dump(ast.parse(call, mode="eval").body)
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    [statement] = tree.body
    test = statement.test if isinstance(statement, ast.Assert) else \
        statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    other = right if ast.dump(left) == target else left if ast.dump(right) == target else None
    return ast.get_source_segment(answer, other) if other is not None else None


def _answers(text: str) -> bool:
    return value_of(text) is not None or _EXCEPTION.fullmatch(text.strip()) is not None


def _rounds_to(value: object, text: str) -> bool:
    """Whether a number rounded to the decimals `text` shows is the number `text` says (1-6 decimals)."""
    shown = value_of(text)
    decimals = len(text.partition(".")[2]) if "." in text and "e" not in text.lower() else 0
    if not (isinstance(shown, float) and isinstance(value, (int, float)) and not isinstance(value, bool)
            and 1 <= decimals <= 6):
        return False
    return abs(value - shown) <= 0.5 * 10**-decimals * (1 + 1e-9)


def _same(a: object, b: object) -> bool:
    if a is None or b is None:
        return False
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return type(a) is type(b) and a == b
