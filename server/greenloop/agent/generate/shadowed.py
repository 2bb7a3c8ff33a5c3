"""A generated class whose instance attribute hides its own method of the same name: the attribute renamed `_name`.

The 1.5B model's `BankAccount` set `self.balance = initial_balance` and defined `def balance(self)`,
and the same for `history`, in both bench runs that asked for it. On an instance the attribute
hides the method, so every `account.balance()` failed with "'float' object is not callable", and no
repair round found it: each is asked about one function, and the fault is between two. Renaming
the attribute (every `self.balance` that is not a call) keeps what the class means, and is what
a person would do; python only, and only where `_name` is not in use already.
"""

from __future__ import annotations

import ast

from greenloop.agent.generate.pysource import python_tree


def unshadow(path: str, text: str) -> str:
    """`text` with each class's instance attributes that hide one of its plain methods renamed `_name`."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    places: list[tuple[int, int]] = []  # (line, byte column) where a `_` goes
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        methods = {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and not f.decorator_list and not f.name.startswith("__")}
        uses = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == "self"]
        called = {id(n.func) for n in ast.walk(cls) if isinstance(n, ast.Call)}
        assigned = {n.attr for n in uses if isinstance(n.ctx, ast.Store)}
        taken = {n.attr for n in uses} | {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        clash = {name for name in methods & assigned if f"_{name}" not in taken}
        for node in uses:
            if node.attr in clash and id(node) not in called and node.end_lineno is not None:
                places.append((node.end_lineno, (node.end_col_offset or 0) - len(node.attr.encode("utf-8"))))
    if not places:
        return text
    rows = text.splitlines(keepends=True)
    for line, column in sorted(set(places), reverse=True):
        row = rows[line - 1].encode("utf-8")
        rows[line - 1] = (row[:column] + b"_" + row[column:]).decode("utf-8")
    return "".join(rows)
