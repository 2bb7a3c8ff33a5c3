"""pytest's own fixtures imported by name in a generated test (`from pytest import tmp_path`): the import dropped.

The 1.5B model's csv-stats test began `from pytest import tmp_path` and took `tmp_path` as a test's
parameter: pytest has no such name to import, so the file failed to load with an ImportError, and
all three rounds went by with every test unrun. A fixture reaches a test through its parameter,
never an import; the names pytest provides are dropped from `from pytest import ...` (the line
goes when nothing is left), and anything else it imports stays.
"""

from __future__ import annotations

import ast

from greenloop.agent.generate.pysource import python_tree

BUILTIN_FIXTURES = frozenset({
    "cache", "capfd", "capfdbinary", "caplog", "capsys", "capsysbinary", "doctest_namespace", "monkeypatch",
    "pytestconfig", "record_property", "record_testsuite_property", "record_xml_attribute", "recwarn",
    "request", "testdir", "pytester", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory",
})


def drop_fixture_imports(path: str, text: str) -> str:
    """`text` without pytest's fixture names in its `from pytest import ...` lines."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    rows = text.splitlines(keepends=True)
    for node in reversed(tree.body):
        if not (isinstance(node, ast.ImportFrom) and node.module == "pytest" and node.level == 0
                and node.end_lineno is not None and any(a.name in BUILTIN_FIXTURES for a in node.names)):
            continue
        row = rows[node.lineno - 1]
        if node.end_lineno != node.lineno or row[: node.col_offset].strip() or ";" in row:
            continue  # not a line of its own: left as it is
        ending = row[len(row.rstrip("\r\n")) :]
        kept = [a for a in node.names if a.name not in BUILTIN_FIXTURES]
        names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in kept)
        rows[node.lineno - 1] = f"{' ' * node.col_offset}from pytest import {names}{ending}" if kept else ""
    return "".join(rows)
