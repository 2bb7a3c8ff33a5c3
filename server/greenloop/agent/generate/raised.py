"""An exception class a generated module raises and no file of the project defines, defined in that module.

The 1.5B model's bank.py raised `InsufficientFunds`, its test expected it with `pytest.raises`, and
neither file defined it: the test failed on a NameError before its check ran, and no repair round
looked at the line that lacked it. Like an editor's "create class" quick fix, the name gets
`class InsufficientFunds(Exception)` after the module's imports; the test then gets the import
(unbound.py). Only for a capitalised name the module raises and does not bind, that no other
written module defines, and that no other planned source file's purpose names (its home, not
written yet).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from greenloop.agent.generate.pysource import python_tree
from greenloop.agent.generate.unbound import unbound, with_lines
from greenloop.retrieval import public_names


def define_raised(path: str, text: str, known: Mapping[str, str], elsewhere: str = "") -> str:
    """`text` with a class for each exception it raises that nothing defines (`known`: the project's
    files written so far, path -> text; `elsewhere`: what the other planned files say they hold)."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    missing = unbound(tree)
    raised: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        named = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(named, ast.Name) and named.id in missing and named.id[:1].isupper() and named.id not in raised:
            raised.append(named.id)
    homeless = [name for name in raised if name not in elsewhere
                and not any(p != path and p.endswith(".py") and name in public_names(p, t) for p, t in known.items())]
    if not homeless:
        return text
    lines: list[str] = []
    for name in homeless:
        lines += ["", "", f"class {name}(Exception):", "    pass"]
    lines += ["", ""]
    headed = bool(tree.body) and (isinstance(tree.body[0], (ast.Import, ast.ImportFrom)) or ast.get_docstring(tree))
    added = with_lines(text, tree, lines if headed else lines[2:])  # at the top: no blank lines first
    return re.sub(r"(    pass(\r?\n))(?:\r?\n){3,}", r"\1\2\2", added)  # two blank lines after, not four
