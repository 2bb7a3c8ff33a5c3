"""The failing assertion in words: which call gave what, and what the test expects (pytest's rewritten assert).

pytest shows a failed `assert f(2) == 5` as `assert 4 == 5` with `+  where 4 = f(2)` under it: the values
only, and which call gave one of them. A small model reads the comparison better said once in words
("`f(2)` returned `4`, and the test expects `5`"). The side a `where` line names is the code's; with no
`where` (a local name), the failing line in the traceback (`>   assert total == 5`) says which side the
test computed. When neither tells, nothing is said: the sentence never guesses which side is which.
"""

from __future__ import annotations

import ast
import re

from greenloop.agent.prompting.material import tidy

VALUE_CHARS = 120  # a value longer than this is cut (its length said)
_PARSED_CHARS = 20_000  # an assert line longer than this is not read at all
_WHERE = re.compile(r"^\s*\+(?P<indent>\s+)where (?P<value>.+?) = (?P<call>.+)$")
_ASSERT = re.compile(r"^(?:E\s+)?(?:AssertionError: )?(assert .+)$")
_SOURCE = re.compile(r"^>\s+(assert\b.+)$", re.M)
_BREAK = re.compile(r"[ \t]*[\r\n]+\s*")

# what the test expects of the code's value, by operator: (the code's value on the left, on the right)
_EXPECTS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Eq: ("`{}`", "`{}`"),
    ast.NotEq: ("anything but `{}`", "anything but `{}`"),
    ast.In: ("it to be in `{}`", "it to contain `{}`"),
    ast.NotIn: ("it not to be in `{}`", "it not to contain `{}`"),
    ast.Is: ("it to be `{}`", "it to be `{}`"),
    ast.IsNot: ("it not to be `{}`", "it not to be `{}`"),
    ast.Lt: ("it to be less than `{}`", "it to be greater than `{}`"),
    ast.LtE: ("it to be at most `{}`", "it to be at least `{}`"),
    ast.Gt: ("it to be greater than `{}`", "it to be less than `{}`"),
    ast.GtE: ("it to be at least `{}`", "it to be at most `{}`"),
}


def compared(message: str, traceback: str = "", *, who: str = "the test") -> str:
    """"`call` returned `got`, and {who} expects `want`." for a failed comparison pytest showed, else ""."""
    try:
        text, lines = (_printable(tidy(t).replace("\r\n", "\n")) for t in (message, traceback))
        return _compared(text, lines, who)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return ""  # a message this cannot read says nothing more; the failure is still shown as it is


def _compared(message: str, traceback: str, who: str) -> str:
    lines = message.splitlines()
    at, statement = next(((n, m[1]) for n, line in enumerate(lines) if (m := _ASSERT.match(line.strip()))), (0, ""))
    shown = _test_of(statement) if statement else None
    if shown is None:
        return ""
    expression, source = shown
    where = _where(lines[at + 1 :])
    if isinstance(expression, ast.Compare):
        if len(expression.ops) != 1:
            return ""  # a chained comparison (0 < x < 3): no one value is expected
        sides = [_segment(source, expression.left), _segment(source, expression.comparators[0])]
        return _comparison(type(expression.ops[0]), sides, where, _source_sides(traceback, expression), who)
    negated = isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.Not)
    value = _segment(source, expression.operand if isinstance(expression, ast.UnaryOp) else expression)
    if value not in where:
        return ""
    return f"{_gave(where[value], value)}, and {who} expects a {'false' if negated else 'true'} value."


def _comparison(op: type[ast.cmpop], sides: list[str], where: dict[str, str], source: list[str] | None,
                who: str) -> str:
    """The sentence for `sides[0] <op> sides[1]`: the side a `where` names (or the failing line computed) is the code's."""
    named = [side in where for side in sides]
    if any(named):
        got = 0 if named[0] else 1
        calls, also = [where.get(side, "") for side in sides], named[1 - got] and sides[0] != sides[1]
    elif source is not None:
        computed = [_flat(text) != _flat(side) for text, side in zip(source, sides, strict=True)]
        if not any(computed) or any(c and _literal(text) for c, text in zip(computed, source, strict=True)):
            return ""  # nothing computed, or a literal shown as another value: that line is not this comparison
        got = 0 if computed[0] else 1
        calls, also = source, computed[1 - got]
    else:
        return ""
    want = 1 - got
    wanted = _EXPECTS[op][got].format(_short(sides[want]))
    if also:  # both sides computed: say where the expected one came from
        call = _short(calls[want])
        wanted += f" (what `{call}` returned)" if call.endswith(")") else f" (the value of `{call}`)"
    return f"{_gave(calls[got], sides[got])}, and {who} expects {wanted}."


def _gave(call: str, value: str) -> str:
    verb = "returned" if call.rstrip().endswith(")") else "is"
    return f"`{_short(call)}` {verb} `{_short(value)}`"


def _test_of(statement: str) -> tuple[ast.expr, str] | None:
    """The tested expression of `assert ...` (its message left out), with the text it was read from."""
    if len(statement) > _PARSED_CHARS:
        return None
    tree = ast.parse(statement.strip(), mode="exec")
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    return tree.body[0].test, statement.strip()


def _segment(source: str, node: ast.expr) -> str:
    return ast.get_source_segment(source, node) or ""


def _where(lines: list[str]) -> dict[str, str]:
    """The outermost `+  where value = call` lines: value -> the call that gave it."""
    found = [m for line in lines if (m := _WHERE.match(line))]
    if not found:
        return {}
    outer = min(len(m["indent"]) for m in found)
    return {m["value"].strip(): m["call"].strip() for m in found if len(m["indent"]) == outer}


def _source_sides(traceback: str, shown: ast.Compare) -> list[str] | None:
    """The failing line's two sides as the test wrote them (`>   assert total == 5`), when it is the same comparison."""
    lines = _SOURCE.findall(traceback)
    parsed = _test_of(lines[-1]) if lines else None
    if parsed is None:
        return None
    expression, source = parsed
    if not (isinstance(expression, ast.Compare) and len(expression.ops) == 1
            and type(expression.ops[0]) is type(shown.ops[0])):
        return None
    return [_segment(source, expression.left), _segment(source, expression.comparators[0])]


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _flat(text: str) -> str:
    return "".join(text.split())


def _printable(text: str) -> str:
    """`text` with each control character (a NUL, an escape) written as its escape; lines kept."""
    return "".join(c if c.isprintable() or c in "\n\t" else c.encode("unicode_escape").decode("ascii") for c in text)


def _short(text: str) -> str:
    """One line, printable, at most VALUE_CHARS: a huge or binary-looking value is cut, its length said.

    Only line breaks (and the indent around them) become one space: a run of spaces inside a line is kept,
    since in a quoted value it can be the very difference the test is about ('a  b' against 'a b')."""
    text = _printable(_BREAK.sub(" ", text.strip()))
    if len(text) <= VALUE_CHARS:
        return text
    return f"{text[: VALUE_CHARS - 20]}… ({len(text)} characters)"
