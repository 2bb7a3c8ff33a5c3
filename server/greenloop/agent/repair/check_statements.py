"""The failing checks of tests written in this run: the statement each test stopped at, and corrected ones spliced in.

When generation wrote the tests together with the code, a failing test is as likely to expect a
wrong value as the code is to compute one. Asking the model for the whole test (or the whole
test file) again gave it back unchanged or with checks dropped; the statement the test stopped
at, with what the code gave, is a question a small model can answer. The reply is one code block
holding the corrected statements in the order asked; each replaces its statement in place, with
the file's indentation and line endings, as one `edit` whose search text is the file's own lines.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import tree_sitter as ts

from greenloop.agent.changes.same_code import normal_text, same_code
from greenloop.agent.changes.syntax import first_error, parse
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.cases import case_of
from greenloop.agent.repair.places import frames, known_path
from greenloop.agent.repair.splice import SpliceError, Unchanged, code_blocks, has_code_block, unique_prefix
from greenloop_sandbox import TestReport

COLLECTION_ERROR = "collection failure"  # pytest's message for a test file that did not load
DEFINITIONS_ONLY = "the reply gives definitions, not the checks: give each check as the statement it is"
MAX_CHECKS = 4  # a round asks about at most this many failing checks
# Nodes whose children are statements, per grammar family (python, js/ts, rust)
_BODIES = {"block", "module", "statement_block", "program", "source_file", "declaration_list"}
_COMMENTS = {"comment", "line_comment", "block_comment"}
_IMPORTS = {"import_statement", "import_from_statement", "use_declaration"}
_DEFINES = {"function_definition", "class_definition", "decorated_definition", "function_declaration",
            "class_declaration", "function_item"}
_LIBRARY = re.compile(r"site-packages|dist-packages|/lib/python\d|^<|importlib")  # frames of python and packages
# the failure says the check's call ran and gave a value (or no exception): its arguments are the question
_RAN = re.compile(r"assert |AssertionError|Failed: DID NOT RAISE")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_HELPERS = {"assert", "raises", "approx", "expect", "len", "str", "int", "float", "list", "dict", "set", "tuple",
            "sorted", "round", "abs", "isinstance", "type", "print", "repr", "bool", "equal", "strictEqual",
            "deepEqual", "deepStrictEqual", "ok", "toBe", "toEqual", "assert_eq", "assert_ne", "assertEqual",
            "assertTrue", "assertFalse", "assertRaises", "assertIn", "assertIsNone"}
# A check in a test: python's assert / unittest's assertX / pytest.raises, JS expect / assert, Rust assert!
CHECK = re.compile(r"\bassert\w*\b|\braises\(|\bexpect\(")


@dataclass(frozen=True)
class Check:
    """One failing test's statement where it stopped, and what the failure said there."""

    path: str
    test: str  # the test's name as the report gives it
    start_line: int  # 1-based, inclusive: the whole statement
    end_line: int
    text: str  # the statement's lines as they are in the file
    message: str  # the failure's first lines (what the code gave)
    # a parametrized test's failing case: `text` is its decorator entry, `via` the statement it stopped
    # at (cases.py), `names` the parametrized arguments
    via: str = ""
    via_line: int = 0  # where `via` starts
    names: tuple[str, ...] = ()


def failing_checks(report: TestReport, files: Mapping[str, str], tests: TestFiles) -> list[Check]:
    """The statements the failing tests stopped at, in test files `files` holds (at most MAX_CHECKS)."""
    found: list[Check] = []
    for failure in report.failures:
        place = _test_place(failure.file, failure.line, failure.traceback, files, tests)
        if place is None or (failure.message == COLLECTION_ERROR and _fails_beyond(place, failure.traceback, files)):
            continue
        path, line = place
        span = statement_span(path, files[path], line)
        if span is None:
            continue
        rows = files[path].splitlines()[span[0] - 1 : span[1]]
        message = "\n".join(failure.message.strip().splitlines()[:4])
        test = "loading the file" if failure.message == COLLECTION_ERROR else failure.test_id.rsplit("::", 1)[-1]
        if failure.message == COLLECTION_ERROR:
            message = "\n".join(failure.traceback.strip().splitlines()[-3:])
        case = case_of(path, files[path], failure.test_id, line)
        if case is not None:  # the values it checked are its decorator's entry
            if any(c.path == path and c.start_line == case.start_line for c in found):
                continue
            entry = files[path].splitlines()[case.start_line - 1 : case.end_line]
            found.append(Check(path, test, case.start_line, case.end_line, "\n".join(entry), message,
                               via="\n".join(rows), via_line=span[0], names=case.names))
        elif not any(c.path == path and c.start_line == span[0] for c in found):
            found.append(Check(path, test, span[0], span[1], "\n".join(rows), message))
        if len(found) >= MAX_CHECKS:
            break
    return found


def _test_place(
    file: str | None, line: int | None, traceback: str, files: Mapping[str, str], tests: TestFiles
) -> tuple[str, int] | None:
    """The innermost place in a test file: the report's own, else the last traceback frame in one."""
    places = frames(traceback)
    if file and line:
        places.append((file, line))
    for path, at in reversed(places):
        known = known_path(files.keys(), path)
        if known and tests.is_test(known):
            return (known, at) if known not in tests.spec else None  # the spec's checks are never rewritten
    return None


def _fails_beyond(place: tuple[str, int], traceback: str, files: Mapping[str, str]) -> bool:
    """Whether a test file that did not load failed in code it imports (a frame after the test file's own
    that is not a library's): matrix.py's syntax error is no fault of `from matrix import add`."""
    found = frames(traceback)
    start = next((i for i, (path, line) in enumerate(found)
                  if known_path(files.keys(), path) == place[0] and line == place[1]), len(found))
    return any(not known_path(files.keys(), path) and not _LIBRARY.search(path) for path, _ in found[start:])


def statement_span(path: str, source: str, line: int) -> tuple[int, int] | None:
    """(first, last) 1-based lines of the statement that holds `line`: the outermost node starting
    there whose parent is a body of statements. None when there is none (or the language is unknown)."""
    tree = parse(path, source)
    if tree is None:
        return None
    rows = source.splitlines()
    if not 1 <= line <= len(rows):
        return None
    column = len(rows[line - 1]) - len(rows[line - 1].lstrip())
    node: ts.Node | None = tree.root_node.descendant_for_point_range((line - 1, column), (line - 1, column))
    while node is not None and node.parent is not None and node.parent.type not in _BODIES:
        node = node.parent
    if node is None or node.parent is None or node.type in _COMMENTS:
        return None
    return node.start_point[0] + 1, node.end_point[0] + 1


def splice_checks(checks: Iterable[Check], files: Mapping[str, str], reply: str) -> list[EditAction]:
    """The edits putting the reply's statements in place of `checks`, in order; SpliceError says why not."""
    checks = list(checks)
    blocks = [b for b in code_blocks(reply) if b.strip()]
    if not blocks:
        raise SpliceError("the reply holds no code block")
    path = checks[0].path
    if not has_code_block(reply) and first_error(path, _dedented(blocks[-1])) is not None:
        raise SpliceError("the reply holds no code block, only prose")
    statements, imports = _from_blocks(path, blocks, len(checks),
                                       keep_imports=any(_is_import(path, c.text) for c in checks))
    given = len(statements)
    if given < len(checks):  # the model often gives only the checks it corrected
        statements = _matched(checks, statements)
    if len(statements) != len(checks):
        raise SpliceError(f"the reply's code holds {given} statements for the {len(checks)} "
                          "checks asked: give each check once, corrected or as it is, in the order asked")
    edits: list[EditAction] = []
    for file in dict.fromkeys(c.path for c in checks):
        mine = [(c, s) for c, s in zip(checks, statements, strict=True) if c.path == file]
        edits.extend(_file_edits(file, files[file], mine, imports))
    if not edits:
        raise Unchanged("the reply gives every check back as it is: it changes nothing")
    return edits


def _from_blocks(path: str, blocks: list[str], count: int, *, keep_imports: bool) -> tuple[list[str], list[str]]:
    """The reply's statements for `count` checks: its last block's, else those of all its blocks in order
    (the 1.5B model answers each check under its own sentence); blocks that define code are left out
    (the code under test, written out again)."""
    usable = [b for b in blocks if not _defines(path, b)]
    if not usable:  # `def test_x(): assert ...` in place of a check: never called, so the check would be gone
        raise SpliceError(DEFINITIONS_ONLY)
    statements, imports = _statements(path, usable[-1], keep_imports=keep_imports)
    if count == 1:
        return (["\n".join(statements)] if statements else []), imports
    if len(statements) == count or len(usable) == 1:
        return statements, imports
    gathered: tuple[list[str], list[str]] = ([], [])
    for block in usable:
        mine, theirs = _statements(path, block, keep_imports=keep_imports)
        gathered[0].extend(mine)
        gathered[1].extend(theirs)
    return gathered if len(gathered[0]) == count else (statements, imports)


def _matched(checks: list[Check], statements: list[str]) -> list[str]:
    """Fewer statements than checks: each statement in place of the check most like it (at least
    half alike, each check once), the other checks as they are; [] when a statement matches none."""
    out = [textwrap.dedent(c.text) for c in checks]
    free = set(range(len(checks)))
    for statement in statements:
        ratios = {i: difflib.SequenceMatcher(None, normal_text(out[i]), normal_text(statement)).ratio() for i in free}
        best = max(ratios, key=lambda i: (ratios[i], -i), default=None)
        if best is None or ratios[best] < 0.5:
            return []
        out[best] = statement
        free.discard(best)
    return out


def _defines(path: str, block: str) -> bool:
    tree = parse(path, _dedented(block))
    return tree is not None and any(n.type in _DEFINES for n in tree.root_node.named_children)


def _is_import(path: str, text: str) -> bool:
    tree = parse(path, text)
    return tree is not None and any(n.type in _IMPORTS for n in tree.root_node.named_children)


def _statements(path: str, block: str, *, keep_imports: bool) -> tuple[list[str], list[str]]:
    """(the top-level statements of a code block, each as its dedented lines; its imports, unless
    the checks are imports themselves)."""
    text = _dedented(block)
    tree = parse(path, text)
    if tree is None:
        raise SpliceError(f"{path} is in a language greenloop cannot parse")
    if tree.root_node.has_error:
        raise SpliceError(f"the reply's code does not parse (line {first_error(path, text)} of it)")
    rows = text.split("\n")
    statements: list[str] = []
    imports: list[str] = []
    for node in tree.root_node.named_children:
        if node.type in _COMMENTS:
            continue
        if node.type in _DEFINES:
            raise SpliceError("the reply's checks hold a definition: give each check as the statement it is")
        lines = "\n".join(rows[node.start_point[0] : node.end_point[0] + 1]).rstrip()
        (imports if node.type in _IMPORTS and not keep_imports else statements).append(lines)
    return statements, imports


def _dedented(block: str) -> str:
    return textwrap.dedent(block.rstrip())


def _file_edits(path: str, source: str, pairs: list[tuple[Check, str]], imports: list[str]) -> list[EditAction]:
    """One edit from the first changed statement to the last, with the imports the file lacks put after its own."""
    lines = source.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    new = list(lines)
    changed: list[Check] = []
    for check, statement in sorted(pairs, key=lambda p: -p[0].start_line):  # bottom-up: lines stay put
        first, last = check.start_line - 1, check.end_line - 1
        old = "".join(lines[first : last + 1])
        indent = re.match(r"[ \t]*", old).group(0)  # type: ignore[union-attr]
        replacement = "".join((indent + row if row.strip() else "") + newline for row in statement.split("\n"))
        if same_code(path, replacement, old):
            continue
        if len(CHECK.findall(replacement)) < len(CHECK.findall(old)):
            raise SpliceError(f"the reply's check for `{check.test}` has fewer checks than the test's: correct "
                              "what it expects and keep the check")
        called = _calls(old)
        if called and not called & _calls(replacement):
            names = ", ".join(f"`{n}`" for n in sorted(called))
            raise SpliceError(f"the reply's check for `{check.test}` no longer calls {names}: correct what it "
                              "expects and keep what it checks")
        if not check.via and _RAN.match(check.message) and (lost := _asked(path, old) - _asked(path, replacement)):
            raise SpliceError(f"the reply's check for `{check.test}` no longer asks `{min(lost)}`: the call ran, "
                              "so correct what the check expects, not what it calls")
        new[first : last + 1] = [replacement]
        changed.append(check)
    if not changed:
        return []
    low, high = min(c.start_line for c in changed) - 1, max(c.end_line for c in changed) - 1
    segment = "".join(new[low : len(new) - (len(lines) - high - 1)])  # the lines after `high` are the same
    wanted = [*imports, *(["import pytest"] if "pytest." in segment and path.endswith(".py") else [])]
    present = {row.strip() for row in lines}
    missing = [imp for imp in dict.fromkeys(wanted) if imp not in present]
    start = _after_imports(lines[:low]) if missing else low  # new imports go after the file's own
    added = "".join(imp + newline for imp in missing) + (newline if missing and start == 0 else "")
    search = "".join(lines[start : high + 1])
    replace = added + "".join(lines[start:low]) + segment
    candidate = "".join(lines[:start]) + replace + "".join(lines[high + 1 :])
    bad = first_error(path, candidate)
    if bad is not None and first_error(path, source) is None:
        raise SpliceError(f"with the reply's checks {path} does not parse (line {bad})")
    prefix = unique_prefix(search, lines, start)
    return [EditAction(path=path, search=prefix + search, replace=prefix + replace)]


def _asked(path: str, text: str) -> set[str]:
    """The calls of the code a statement makes, with their arguments (spaces and quote style aside)."""
    tree = parse(path, _dedented(text))
    if tree is None:
        return set()
    found: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        function = node.child_by_field_name("function") if node.type in ("call", "call_expression") else None
        name = (function.text or b"").decode("utf-8", "replace").rsplit(".", 1)[-1] if function is not None else ""
        if name and name not in _HELPERS and node.text is not None:
            found.add(re.sub(r"\s+", "", node.text.decode("utf-8", "replace")).replace("'", '"'))
    return found


def _calls(text: str) -> set[str]:
    """The names a statement calls, runner and builtin helpers aside (what the check is about)."""
    return {name for name in _CALL.findall(text) if name not in _HELPERS}


def _after_imports(lines: list[str]) -> int:
    """The index after the file's leading imports (0 when it has none)."""
    last = -1
    for i, row in enumerate(lines):
        if re.match(r"(import |from \S+ import )", row):
            last = i
        elif row.strip() and not row.startswith("#") and last >= 0:
            break
    return last + 1
