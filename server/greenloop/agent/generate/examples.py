"""The examples a request states (a call and what it gives, raises or writes), kept only where the request's text states them.

The model is asked for them as data (acceptance.py); what it sends back is checked here: each call
must be a call on literals, and its names, every argument and the result must appear in the request.
An example that fails the check is dropped with a line saying why, never rendered into a test: a
small model asked to copy examples also invents some, and a test from an invented example would
hold the code to what nobody asked for.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import keyword
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

_EXCEPTION_NAME = re.compile(r"^[A-Za-z_]\w*$")
_PLAN_LINE = re.compile(r"^\s*[-*]\s+`(?P<call>[^`]+?)`\s*(?:raises\s+`?(?P<raises>[\w.]+)`?\s*"
                        r"|writes\s+`(?P<file>[^`]+)`\s*:\s*`(?P<content>[^`]*)`\s*)?$")
_PLAIN_FILE = re.compile(r"^[\w.-]+(?:/[\w.-]+)*$")


class StatedExample(BaseModel):
    """One example as the model gives it."""

    call: str = Field(description="The call as Python with literal arguments, e.g. to_roman(4).")
    returns: str = Field(default="", description="What it gives, as a Python literal; '' when it raises.")
    raises: str = Field(default="", description="The exception it raises, e.g. ValueError; '' when it returns.")
    writes: str = Field(default="", description="The file the call writes (a relative path), or ''.")
    content: str = Field(default="", description="That file's text, as a Python string literal; '' when none.")


class StatedExamples(BaseModel):
    """The acceptance step's reply: the module the request names and the examples it states."""

    module: str = Field(default="", description="The module the request names for the code, or ''.")
    examples: list[StatedExample] = Field(default_factory=list, description="Examples the request states.")


@dataclass(frozen=True)
class Example:
    """A checked example: `call` gives the literal `returns`, raises `raises`, or writes the file `writes` holding the
    string literal `content` (one of the three is set)."""

    call: str  # normalized by ast (`to_roman(4)`)
    returns: str = ""  # the value's repr
    raises: str = ""
    writes: str = ""  # a relative path, written in the folder the call runs in
    content: str = ""  # the file's text, as the repr of a string

    @property
    def names(self) -> list[str]:
        """The names the call uses, outermost first: `Stack().pop()` -> ['Stack', 'pop']."""
        return call_names(ast.parse(self.call, mode="eval").body) or []

    @property
    def function(self) -> str:
        """The top-level name the call starts from (what the test imports)."""
        return self.names[0]

    def line(self) -> str:
        """The example as plan.md shows it (`parse_line` reads it back)."""
        if self.raises:
            return f"- `{self.call}` raises `{self.raises}`"
        if self.writes:
            return f"- `{self.call}` writes `{self.writes}`: `{self.content}`"
        return f"- `{self.call} == {self.returns}`"


@dataclass(frozen=True)
class Acceptance:
    """The request's examples as checked: the module it names ("" when none), the examples, and what was dropped."""

    module: str = ""
    examples: tuple[Example, ...] = ()
    dropped: tuple[str, ...] = ()  # one line each: the example and why it is not a test


def call_names(node: ast.expr) -> list[str] | None:
    """The names of a call chain on literals (`f(1)`, `Cls(2).m('a')`), else None."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        inner = call_names(node.value) if isinstance(node.value, (ast.Call, ast.Name)) else None
        return None if inner is None else [*inner, node.attr]
    if isinstance(node, ast.Call):
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        if not all(_literal(a) for a in arguments):
            return None
        return call_names(node.func)
    return None


def arguments(node: ast.expr) -> list[ast.expr]:
    """Every argument of every call in a chain."""
    found: list[ast.expr] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            found += [*part.args, *(k.value for k in part.keywords)]
    return found


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def check_examples(reply: StatedExamples, request: str) -> Acceptance:
    """The reply's examples that the request states; the others dropped, each with why. A second example
    of the same call is dropped when it gives another result (the same one twice is kept once)."""
    kept: dict[str, Example] = {}
    dropped: list[str] = []
    for stated in reply.examples:
        example, why = _checked(stated, request)
        earlier = kept.get(example.call) if example is not None else None
        if example is not None and earlier is None:
            kept[example.call] = example
        elif example is None or earlier != example:
            why = why or f"it contradicts the example `{earlier.line()[3:] if earlier else ''}`"
            dropped.append(f"{_shown(stated)}: {why}")
    return Acceptance(module=_module(reply.module, request), examples=tuple(kept.values()), dropped=tuple(dropped))


def _shown(stated: StatedExample) -> str:
    """An example as the model gave it, for the plan's dropped lines."""
    text = f"`{stated.call.strip()}`"
    if stated.returns.strip():
        text += f" == `{stated.returns.strip()}`"
    if stated.raises.strip():
        text += f" raises `{stated.raises.strip()}`"
    if stated.writes.strip():
        text += f" writes `{stated.writes.strip()}`"
    return text


def _checked(stated: StatedExample, request: str) -> tuple[Example | None, str]:
    """The example when the request states it, else (None, why not)."""
    try:
        tree = ast.parse(stated.call.strip(), mode="eval").body
    except SyntaxError:
        return None, "it is not a Python call"
    names = call_names(tree) if isinstance(tree, ast.Call) else None
    if not names:
        return None, "it is not a call on literal values"
    missing = [n for n in names if not _word(n, request)]
    if missing:
        return None, f"the request does not name {', '.join(f'`{n}`' for n in missing)}"
    for argument in arguments(tree):
        if not stated_value(ast.literal_eval(argument), request, items=False):
            return None, f"the request does not state the argument `{ast.unparse(argument)}`"
    returns, raises = stated.returns.strip(), stated.raises.strip().removesuffix("()")
    if sum(map(bool, (returns, raises, stated.writes.strip()))) != 1:
        return None, "it gives no single result (a value, an exception or a file)"
    call = ast.unparse(tree)
    if stated.writes.strip():
        return _written(call, stated.writes.strip(), stated.content.strip(), request)
    if raises:
        if not _EXCEPTION_NAME.match(raises) or keyword.iskeyword(raises):
            return None, f"`{raises}` is not an exception's name"
        if not _word(raises, request):
            return None, f"the request does not name `{raises}`"
        return Example(call, raises=raises), ""
    try:
        value = ast.literal_eval(returns)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None, f"`{returns}` is not a Python literal"
    if not stated_value(value, request):
        return None, f"the request does not state the result `{returns}`"
    after = _said_after(call, request)
    if after is not None and not any(_link_then(value, text) for text in after):
        if any(stated_value(value, text) for text in after):
            return None, f"the request says `{returns}` after `{call}`, not as what it gives"
        return None, f"the request does not state the result `{returns}`"
    return Example(call, returns=repr(value)), ""


# what may stand between a call written in the request and its result ("f(4) is 'IV'", "f(4) returns 4")
_LINK = re.compile(
    r"\s*,?\s*(?:is|are|returns?|gives?|yields?|equals?|evaluates to|produces|becomes|should (?:be|return|give)|"
    r"must (?:be|return|give)|==|->|=>|→|=|:)\s+", re.IGNORECASE)
_NEXT_CALL = re.compile(r"[A-Za-z_][\w.]*\(|[.;](?:\s|$)")


def _said_after(call: str, request: str) -> list[str] | None:
    """The text after each place the request writes `call` (quote marks and spaces after commas aside),
    None when it writes it nowhere (the result may then be stated in prose: "4 is 'IV'")."""
    forms = {call, call.replace("'", '"'), call.replace(", ", ","), call.replace("'", '"').replace(", ", ",")}
    found = [request[m.end():m.end() + 200] for form in forms for m in re.finditer(re.escape(form), request)]
    return found or None


def _link_then(value: object, text: str) -> bool:
    """Whether `text` (what follows a written call) links it to `value` at once: "is 'IV'", "returns 4"."""
    linked = _LINK.match(text)
    if linked is None:
        return False
    rest = text[linked.end():]
    stop = _NEXT_CALL.search(rest, 1)
    return stated_value(value, rest[:stop.start()] if stop else rest)


def _written(call: str, path: str, content: str, request: str) -> tuple[Example | None, str]:
    """A file-writing example when the request names the file and states its text."""
    if not _PLAIN_FILE.match(path) or ".." in path.split("/"):
        return None, f"`{path}` is not a relative file path"
    if not (stated_value(path, request) or stated_value(path.rsplit("/", 1)[-1], request)):
        return None, f"the request does not name the file `{path}`"
    try:
        text = ast.literal_eval(content) if content else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        text = None
    if not isinstance(text, str) or not stated_value(text, request):
        return None, f"the request does not state what `{path}` holds"
    return Example(call, writes=path, content=repr(text)), ""


def stated_value(value: object, request: str, *, items: bool = True) -> bool:
    """Whether the request's text states `value`: a number as a number, a string quoted (or a bare word),
    a container as written (spaces and quote marks aside) or, failing that and given `items`, each of its
    items (a result written in prose; an argument must be written as it is passed)."""
    if isinstance(value, bool) or value is None:
        return _word(str(value), request) or _word(json.dumps(value), request)
    if isinstance(value, (int, float)):
        forms = {repr(value), str(value)}
        if isinstance(value, float) and value.is_integer():
            forms.add(str(int(value)))
        return any(re.search(rf"(?<![\w.]){re.escape(f)}(?![\w]|\.\d)", request) for f in forms)
    if isinstance(value, str):
        quoted = any(f"{q}{value}{e}" in request for q, e in (("'", "'"), ('"', '"'), ("`", "`"), ("“", "”")))
        bare = bool(value) and not re.search(r"\s", value) and _word(value, request)
        return quoted or bare or (bool(value) and json.dumps(value) in request)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        compact = _compact(request)
        if any(_compact(form) in compact for form in _container_forms(value)):
            return True
        parts = list(value.items()) if isinstance(value, dict) else list(value)
        return items and bool(parts) and all(_stated_item(part, request) for part in parts)
    return False


def _stated_item(item: object, request: str) -> bool:
    if isinstance(item, tuple):  # a dict's (key, value), or a tuple inside a list
        return all(stated_value(part, request) for part in item)
    return stated_value(item, request)


def _container_forms(value: object) -> list[str]:
    forms = [repr(value)]
    with contextlib.suppress(TypeError, ValueError):
        forms.append(json.dumps(value))
    if isinstance(value, tuple):
        forms.append(repr(list(value)))
    return forms


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "'")


def _word(name: str, request: str) -> bool:
    return bool(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", request))


def _module(module: str, request: str) -> str:
    """The module the reply names, when it is a Python name the request uses; else ""."""
    name = module.strip().strip("`").removesuffix(".py").replace("/", ".")
    parts = name.split(".")
    if not name or not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return ""
    return name if _word(name, request) or f"{name.replace('.', '/')}.py" in request else ""


def parse_line(line: str) -> Example:
    """An example from a plan.md line (`- \\`f(1) == 2\\`` or `- \\`f(0)\\` raises \\`ValueError\\``);
    ValueError saying what is wrong with it."""
    match = _PLAN_LINE.match(line)
    if match is None:
        raise ValueError(f"cannot read the example {line.strip()!r}; write `call == value` or `call` raises `Error`")
    text, raises, path = match.group("call").strip(), match.group("raises"), match.group("file")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ValueError(f"the example `{text}` is not Python") from None
    if raises or path:
        if not isinstance(tree, ast.Call) or not call_names(tree):
            raise ValueError(f"the example `{text}` is not a call on literal values")
        if raises:
            return Example(ast.unparse(tree), raises=raises)
        try:
            content = ast.literal_eval(match.group("content"))
        except (ValueError, SyntaxError):
            content = None
        if not isinstance(content, str) or not _PLAIN_FILE.match(path) or ".." in path.split("/"):
            raise ValueError(f"the example `{text}` writes `{path}`: give a relative path and its text as a string")
        return Example(ast.unparse(tree), writes=path, content=repr(content))
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)):
        raise ValueError(f"the example `{text}` is not `call == value`")
    call, want = tree.left, tree.comparators[0]
    if not isinstance(call, ast.Call) or not call_names(call) or not _literal(want):
        raise ValueError(f"the example `{text}` is not a call on literal values compared with a literal")
    return Example(ast.unparse(call), returns=repr(ast.literal_eval(want)))


def is_builtin_exception(name: str) -> bool:
    kind = getattr(builtins, name, None)
    return isinstance(kind, type) and issubclass(kind, BaseException)
