"""Def-level ground truth of a fix: the test-file rule, the defs of a source file, and the defs a patch changes."""
from __future__ import annotations

import ast
import re
from pathlib import Path


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (any(p in {"test", "tests", "testing"} for p in parts[:-1])
            or name.startswith(("test_", "tests_")) or name.endswith("_test.py")
            or name == "conftest.py")


# ------------------------------------------------------------------- defs
class Def:
    __slots__ = ("end", "first", "path", "start", "symbol")

    def __init__(self, path: str, symbol: str, start: int, end: int, first: int):
        self.path, self.symbol, self.start, self.end, self.first = path, symbol, start, end, first


def defs_of(source: str, path: str) -> list[Def]:
    """Every def (functions, methods, nested defs) with its dotted name."""
    tree = ast.parse(source)
    found: list[Def] = []

    def walk(node: ast.AST, prefix: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                found.append(Def(path, ".".join([*prefix, child.name]),
                                 child.lineno, child.end_lineno, first))
                walk(child, [*prefix, child.name])
            elif isinstance(child, ast.ClassDef):
                walk(child, [*prefix, child.name])
            else:
                walk(child, prefix)

    walk(tree, [])
    return found


def innermost(defs: list[Def], line: int) -> Def | None:
    best = None
    for d in defs:
        if d.first <= line <= d.end and (best is None or d.start >= best.start):
            best = d
    return best


def enclosing_chain(defs: list[Def], line: int) -> list[Def]:
    inside = [d for d in defs if d.first <= line <= d.end]
    return sorted(inside, key=lambda d: -d.start)


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


# ------------------------------------------------------------------- truth
def patch_lines(patch: str) -> dict[str, dict[str, list[tuple[int, str]]]]:
    """path -> {'-': [(old line, text)], '+': [(new line, text)]}."""
    files: dict[str, dict[str, list[tuple[int, str]]]] = {}
    cur = None
    old = new = 0
    for line in patch.splitlines():
        if line.startswith("diff --git"):
            cur = None
        elif line.startswith("--- "):
            continue
        elif line.startswith("+++ "):
            name = line[4:].strip()
            cur = files.setdefault(name[2:] if name.startswith("b/") else name,
                                   {"-": [], "+": []})
        elif line.startswith("@@"):
            m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)", line)
            old, new = int(m.group(1)), int(m.group(2))
        elif cur is None or line.startswith("\\"):
            continue
        elif line.startswith("-"):
            cur["-"].append((old, line[1:]))
            old += 1
        elif line.startswith("+"):
            cur["+"].append((new, line[1:]))
            new += 1
        else:
            old += 1
            new += 1
    return files


def truth_of(patch: str, buggy: Path, fixed: Path) -> tuple[list[dict], list[str]]:
    truth: dict[tuple[str, str], Def] = {}
    notes: list[str] = []
    for path, changes in patch_lines(patch).items():
        if not path.endswith(".py") or is_test_path(path):
            continue
        bsrc = read_text(buggy / path) if (buggy / path).is_file() else ""
        fsrc = read_text(fixed / path) if (fixed / path).is_file() else ""
        bdefs = defs_of(bsrc, path) if bsrc else []
        fdefs = defs_of(fsrc, path) if fsrc else []
        blines, flines = bsrc.splitlines(), fsrc.splitlines()
        for ln, text in changes["-"]:
            if ln > len(blines) or blines[ln - 1].rstrip() != text.rstrip():
                notes.append(f"{path}:{ln} '-' line does not match buggy file")
            d = innermost(bdefs, ln)
            if d:
                truth[(d.path, d.symbol)] = d
        by_name = {d.symbol: d for d in bdefs}
        for ln, text in changes["+"]:
            if ln > len(flines) or flines[ln - 1].rstrip() != text.rstrip():
                notes.append(f"{path}:{ln} '+' line does not match fixed file")
            for fd in enclosing_chain(fdefs, ln):  # innermost def that exists in buggy
                if fd.symbol in by_name:
                    d = by_name[fd.symbol]
                    truth[(d.path, d.symbol)] = d
                    break
    rows = [{"path": d.path, "symbol": d.symbol, "start": d.start, "end": d.end}
            for d in sorted(truth.values(), key=lambda d: (d.path, d.start))]
    return rows, notes
