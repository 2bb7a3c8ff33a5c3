"""The requirements a setup.py passes to `setup()`, read from its syntax tree (the file is never run).

setup.py files build their lists in a few common shapes, each read here:
- literals: `install_requires=["a", "b"]`, tuples and sets too;
- names bound at the top of the file (also inside `with` and `try` blocks and `if __name__ == "__main__":`),
  with their top-level `append`, `extend`, `remove`, `+=` and `d["key"] = ...`; strings joined with `+`
  (`"uvloop>=0.15" + env_marker`); lists joined with `+` (`tests_require + ["tox"]`); `list(...)`, `sorted(...)`;
- a dict passed as `setup(**kwargs)`, built as a literal, `dict(...)` or key by key;
- a requirements file the value reads: a string naming a file of the workspace in the value's expression
  (`open("requirements.txt").read().splitlines()`, `read_file("requirements.in")`), in the body of the
  function the value calls (`get_requirements()`), or in the `with open(...) as f:` whose name it uses;
- a condition on the interpreter (`if sys.version_info >= (3, 5, 2):`, `sys.platform == "win32"`, `os.name`,
  `platform.system()`, a name bound to one such as `PY2 = ...`, `x if ... else y`): decided as the environment
  markers of requirements are (packaging's default environment: this Python, Linux), and only the branch
  that holds is read, as setuptools would when run there.
Anything else (another condition, a loop, a value computed at run time) is not read: its requirements are
not declared where a reader can see them.
"""

from __future__ import annotations

import ast
import operator
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from packaging.markers import default_environment

Read = Callable[[str], str | None]  # a workspace file's text, None when it has none
RequirementLines = Callable[[str], list[str]]  # a requirements file's lines (its `-r` includes followed)
Value = str | list[str] | dict[str, "Value"]
_WRAPPERS = {"list", "sorted", "tuple", "set", "frozenset"}


@dataclass(frozen=True)
class FileRef:
    """A name bound to an opened file (`with open("requirements.txt") as f`)."""

    path: str


@dataclass
class _Evaluator:
    """Reads the top-level bindings of one setup.py, then the values of its `setup()` keywords."""

    tree: ast.Module
    read: Read
    lines_of: RequirementLines
    names: dict[str, Value | FileRef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)  # names bound to a condition on the interpreter

    def bind(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._assign(node.targets[0], node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assign(node.target, node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
                self._assign(node.target, ast.BinOp(left=ast.Name(id=node.target.id), op=ast.Add(), right=node.value))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                self._method_call(node.value)
            elif isinstance(node, ast.With):
                for item in node.items:
                    if isinstance(item.optional_vars, ast.Name) and (paths := self._files_in(item.context_expr)):
                        self.names[item.optional_vars.id] = FileRef(paths[0])
                self.bind(node.body)
            elif isinstance(node, ast.Try) or (isinstance(node, ast.If) and _is_main_guard(node.test)):
                self.bind(node.body)
            elif isinstance(node, ast.If) and (holds := _holds(node.test, self.flags)) is not None:
                self.bind(node.body if holds else node.orelse)

    def _assign(self, target: ast.expr, value_node: ast.expr) -> None:
        value = self.value(value_node)
        if value is None:
            if isinstance(target, ast.Name) and (holds := _holds(value_node, self.flags)) is not None:
                self.flags[target.id] = holds
            return
        if isinstance(target, ast.Name):
            self.names[target.id] = value
        elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
              and isinstance(bound := self.names.get(target.value.id), dict)
              and isinstance(key := target.slice, ast.Constant) and isinstance(key.value, str)):
            bound[key.value] = value

    def _method_call(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and len(call.args) == 1):
            return
        bound = self.names.get(func.value.id)
        arg = self.value(call.args[0])
        if isinstance(bound, list) and func.attr == "append" and isinstance(arg, str):
            bound.append(arg)
        elif isinstance(bound, list) and func.attr == "extend" and isinstance(arg, list):
            bound.extend(arg)
        elif isinstance(bound, list) and func.attr == "remove" and arg in bound:
            bound.remove(arg)
        elif isinstance(bound, dict) and func.attr == "update" and isinstance(arg, dict):
            bound.update(arg)

    def value(self, node: ast.expr) -> Value | None:
        """The string, list of strings or dict the expression builds; a file it reads as its lines; else None."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            bound = self.names.get(node.id)
            return self._copy(bound) if not isinstance(bound, FileRef) else None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._list(node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return left + right if isinstance(left, list) and isinstance(right, list) else None
        if isinstance(node, ast.Dict):
            return self._dict(node)
        if isinstance(node, ast.IfExp) and (holds := _holds(node.test, self.flags)) is not None:
            return self.value(node.body if holds else node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _WRAPPERS and len(node.args) == 1 and isinstance(inner := self.value(node.args[0]), list):
                return inner
            if node.func.id == "dict" and not node.args:
                return {k.arg: v for k in node.keywords if k.arg and (v := self.value(k.value)) is not None}
        paths = self._files_in(node)
        return [line for path in paths for line in self.lines_of(path)] if paths else None

    def _list(self, elements: list[ast.expr]) -> list[str]:
        out: list[str] = []
        for element in elements:
            found = self.value(element.value if isinstance(element, ast.Starred) else element)
            if isinstance(found, str):
                out.append(found)
            elif isinstance(found, list):
                out.extend(found)
        return out

    def _dict(self, node: ast.Dict) -> dict[str, Value]:
        out: dict[str, Value] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            found = self.value(item)
            if key is None and isinstance(found, dict):
                out.update(found)  # {**other}
            elif isinstance(key, ast.Constant) and isinstance(key.value, str) and found is not None:
                out[key.value] = found
        return out

    def _files_in(self, node: ast.expr) -> list[str]:
        """Workspace files the expression reads: a string in it (or joined from a call's string arguments), a
        name bound by `with open(...) as f`, or a string in the body of a function of this file it calls."""
        found: list[str] = []
        for sub in ast.walk(node):
            texts: list[str] = []
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                texts.append(sub.value)
            elif isinstance(sub, ast.Call):
                parts = [a.value for a in sub.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                texts.append("/".join(parts))
                if isinstance(sub.func, ast.Name) and (func := self.functions.get(sub.func.id)) is not None:
                    texts.extend(c.value for c in ast.walk(func)
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str))
            elif isinstance(sub, ast.Name) and isinstance(ref := self.names.get(sub.id), FileRef):
                texts.append(ref.path)
            for text in texts:
                path = _workspace_path(text)
                if path and path not in found and self.read(path) is not None:
                    found.append(path)
        return found

    @staticmethod
    def _copy(value: Value | None) -> Value | None:
        return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def setup_py_requirements(text: str, read: Read, lines_of: RequirementLines, wanted: Callable[[str], bool]) -> list[str]:
    """`install_requires`, `tests_require` and the `extras_require` groups `wanted` accepts, as requirement lines."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    evaluator = _Evaluator(tree, read, lines_of)
    evaluator.bind(tree.body)
    found: list[str] = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if getattr(call.func, "id", getattr(call.func, "attr", "")) != "setup":
            continue
        keywords: dict[str, Value] = {}
        for keyword in call.keywords:
            value = evaluator.value(keyword.value)
            if keyword.arg is None and isinstance(value, dict):
                keywords.update(value)  # setup(**kwargs)
            elif keyword.arg is not None and value is not None:
                keywords[keyword.arg] = value
        for name in ("install_requires", "tests_require"):
            found.extend(_as_lines(keywords.get(name)))
        extras = keywords.get("extras_require")
        if isinstance(extras, dict):
            for group, entries in extras.items():
                if wanted(group):
                    found.extend(_as_lines(entries))
    return found


def _as_lines(value: Value | None) -> list[str]:
    """A keyword's requirements: a list as is, a string as its lines (setuptools accepts both)."""
    if isinstance(value, str):
        return [line for line in (part.strip() for part in value.splitlines()) if line and not line.startswith("#")]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _workspace_path(text: str) -> str:
    """A relative path inside the workspace that could be a requirements file; "" otherwise."""
    if not text or len(text) > 200 or "\n" in text or text.startswith("/"):
        return ""
    path = posixpath.normpath(text)
    if path.startswith("..") or not (path.endswith((".txt", ".in")) or "requirements" in path):
        return ""
    return path


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


_HERE = default_environment()  # what requirement markers are decided against: this Python, this platform
_ATTRIBUTES: dict[tuple[str, str], object] = {
    ("sys", "platform"): _HERE["sys_platform"], ("os", "name"): _HERE["os_name"],
    ("six", "PY2"): _HERE["python_version"].startswith("2."), ("six", "PY3"): _HERE["python_version"].startswith("3.")}
_CALLS = {("platform", "system"): _HERE["platform_system"],
          ("platform", "python_implementation"): _HERE["platform_python_implementation"]}
_VERSION = tuple(int(part) for part in _HERE["python_full_version"].split(".")[:3] if part.isdigit())
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _holds(test: ast.expr, flags: dict[str, bool]) -> bool | None:
    """Whether a condition on the interpreter holds here; None for any other condition (not decided)."""
    if isinstance(test, ast.Name):
        return flags.get(test.id)
    if isinstance(test, ast.Attribute):
        return fact if isinstance(fact := _fact(test), bool) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, flags)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_holds(v, flags) for v in test.values]
        if None in parts:
            return None
        return all(parts) if isinstance(test.op, ast.And) else any(parts)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in ("startswith", "endswith") \
            and isinstance(of := _fact(test.func.value), str) and len(test.args) == 1:
        arg = _literal(test.args[0])
        prefixes = (arg,) if isinstance(arg, str) else arg if isinstance(arg, tuple) else None
        if prefixes is None or not all(isinstance(p, str) for p in prefixes):
            return None
        return of.startswith(prefixes) if test.func.attr == "startswith" else of.endswith(prefixes)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE:
        left, right = _fact(test.left), _fact(test.comparators[0])
        if left is None and right is None:
            return None
        left = _literal(test.left) if left is None else left
        right = _literal(test.comparators[0]) if right is None else right
        if left is None or right is None:
            return None
        try:
            return bool(_COMPARE[type(test.ops[0])](left, right))
        except TypeError:
            return None
    return None


def _fact(node: ast.expr) -> object | None:
    """The interpreter's value an expression reads (`sys.version_info[:2]`, `sys.platform`, ...); None otherwise."""
    if isinstance(node, ast.Subscript) and _is(node.value, "sys", "version_info"):
        index = node.slice
        if isinstance(index, ast.Slice) and index.lower is None and index.step is None \
                and isinstance(index.upper, ast.Constant) and isinstance(index.upper.value, int):
            return _VERSION[:index.upper.value]
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and 0 <= index.value < len(_VERSION):
            return _VERSION[index.value]
        return None
    if isinstance(node, ast.Attribute) and _is(node.value, "sys", "version_info"):
        return {"major": _VERSION[0], "minor": _VERSION[1]}.get(node.attr)
    if _is(node, "sys", "version_info"):
        return _VERSION
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return _ATTRIBUTES.get((node.value.id, node.attr))
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name):
        return _CALLS.get((node.func.value.id, node.func.attr))
    return None


def _is(node: ast.expr, module: str, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) \
        and node.value.id == module


def _literal(node: ast.expr) -> object | None:
    """A constant, or a tuple/list of constants, as Python has it; None for anything else."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return tuple(value) if isinstance(value, list) else value
