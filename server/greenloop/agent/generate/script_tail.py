"""Example code after a generated Python module's definitions runs only as a script, not on import.

Qwen2.5-Coder 0.5B ended `wordcount.py` with `print(top_words(...))`, which failed when the
tests imported the module, so every test errored at collection and the fix loop chased that.
Putting such a tail under `if __name__ == "__main__":` keeps `python module.py` as it was.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import tree_sitter as ts

from greenloop.agent.changes.syntax import first_error, parse

_DEFINITIONS = {
    "function_definition", "class_definition", "decorated_definition", "import_statement",
    "import_from_statement", "future_import_statement",
}
_GUARD = re.compile(r"^if\s+__name__\s*==", re.MULTILINE)


def guard_script_tail(path: str, text: str) -> str:
    """`text` with its example code (the statements after the last definition, when they print, call
    `main()` or assert) moved under a `__main__` guard.

    Left alone: other languages, `__main__.py`, files that already have the guard or do not parse,
    and module state: constants and globals the definitions read (`PATTERN = re.compile(...)` after
    the functions), with everything above them.
    """
    if not path.endswith(".py") or PurePosixPath(path).name == "__main__.py" or _GUARD.search(text):
        return text
    tree = parse(path, text)
    if tree is None or tree.root_node.has_error:
        return text
    start = _tail_start(tree.root_node.named_children, text.encode("utf-8"))
    if start is None:
        return text
    lines = text.splitlines(keepends=True)
    head, tail = "".join(lines[:start]), lines[start:]
    body = "".join(f"    {line}" if line.strip() else line for line in tail)
    guarded = f'{head}if __name__ == "__main__":\n{body}'
    if not guarded.endswith("\n"):
        guarded += "\n"
    return guarded if first_error(path, guarded) is None else text


def _tail_start(statements: list[ts.Node], source: bytes) -> int | None:
    """0-based line where the script tail begins, None without one.

    The tail is the run of statements after the last definition that ends the file and holds no
    module state, with at least one call in it.
    """
    last_def = max((i for i, s in enumerate(statements) if s.type in _DEFINITIONS), default=None)
    if last_def is None:
        return None
    before = source[: statements[last_def].end_byte].decode("utf-8", "replace")
    first = len(statements)
    while first - 1 > last_def and not _is_state(statements[first - 1], before):
        first -= 1
    if not any(_demo(s) for s in statements[first:]):
        return None
    return statements[first].start_point[0]


def _demo(node: ts.Node) -> bool:
    """Whether the statement prints, calls `main()` or asserts: what example code does, and module set-up
    (`Sequence.register(list)`, `globals().update(...)`, `def_op(...)`) does not. The 1.5B model ended a
    tokenizer with `# Test cases` asserts, one of them false: importing the module failed, both test files
    errored at collection and the loop's three rounds went to the function (2026-12-07)."""
    if node.type == "assert_statement":
        return True
    if node.type == "call":
        function = node.child_by_field_name("function")
        name = function.text.decode("utf-8", "replace") if function is not None and function.text else ""
        if name == "print" or (name == "main" and node.parent is not None and node.parent.type == "expression_statement"):
            return True
    return any(_demo(child) for child in node.named_children)


def _defines(node: ts.Node) -> bool:
    """Whether the statement defines, imports or declares something (`if x: def f...`, `try: import y`)."""
    return node.type in _DEFINITIONS or node.type in ("global_statement", "nonlocal_statement") or any(
        _defines(child) for child in node.named_children
    )


def _is_state(node: ts.Node, before: str) -> bool:
    """A statement that defines something, or an assignment to a constant (`LIMIT`, `__all__`) or to a
    global the definitions read."""
    if _defines(node):
        return True
    assignment = node.named_children[0] if node.type == "expression_statement" and node.named_children else None
    if assignment is None or assignment.type not in ("assignment", "augmented_assignment"):
        return False
    target = assignment.child_by_field_name("left")
    if target is None or target.text is None:
        return False
    names = re.findall(r"[A-Za-z_]\w*", target.text.decode("utf-8", "replace"))
    return any(name.isupper() or name.startswith("__") or _read_not_bound(name, before) for name in names)


def _read_not_bound(name: str, code: str) -> bool:
    """`name` is read in `code` and never assigned there: a global the functions use (a name they
    assign is their own local, like the `result` that example code often reuses)."""
    word = rf"(?<![\w.]){re.escape(name)}\b"
    n = re.escape(name)
    bound = re.search(rf"{word}\s*(:[^=\n]*)?=(?!=)|\b(for|as)\s+{n}\b|[(,]\s*\*{{0,2}}{n}\s*[:,)=]", code)
    return bool(re.search(word, code)) and not bound
