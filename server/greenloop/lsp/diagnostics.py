"""Failing tests -> one LSP diagnostic each, kept per file so that passing tests clear them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from greenloop.lsp.protocol import SOURCE
from greenloop_sandbox.report import TestFailure

# rel path -> the file's text (open buffer or disk), None when unreadable.
TextOf = Callable[[str], str | None]


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def line_range(lines: list[str], index: int) -> types.Range:
    """The non-blank part of line `index` (0-based); line start when the file is unknown."""
    if not 0 <= index < len(lines):
        return types.Range(types.Position(max(index, 0), 0), types.Position(max(index, 0), 0))
    line = lines[index].rstrip("\r\n")
    stripped = line.lstrip()
    start = utf16_len(line[: len(line) - len(stripped)])
    return types.Range(types.Position(index, start), types.Position(index, utf16_len(line.rstrip())))


def file_of_test(failure: TestFailure) -> str | None:
    """Workspace-relative test file: the report's, else the id's path part (`a/b.py::t`)."""
    if failure.file:
        return failure.file.replace("\\", "/")
    head = failure.test_id.split("::", 1)[0]
    return head if "/" in head or "." in head else None


def name_of_test(test_id: str) -> str:
    """`tests/t.py::TestX::test_add[1-2]` -> `test_add`; `suite > adds` -> `adds`."""
    last = re.split(r"::|\s>\s", test_id)[-1]
    return re.sub(r"\[.*\]$", "", last).strip()


def definition_line(lines: list[str], name: str) -> int | None:
    """0-based line that defines test `name` (python def, rust fn, JS test('name'))."""
    if not name:
        return None
    escaped = re.escape(name)
    patterns = (
        rf"^\s*(async\s+)?def\s+{escaped}\b",
        rf"^\s*(pub\s+)?(async\s+)?fn\s+{escaped}\b",
        rf"""\b(it|test)\s*\(\s*['"`]{escaped}['"`]""",
        rf"\bfunction\s+{escaped}\b",
    )
    for pattern in patterns:
        regex = re.compile(pattern)
        for index, line in enumerate(lines):
            if regex.search(line):
                return index
    return None


@dataclass
class TestDiagnostic:
    __test__ = False

    test_id: str
    uri: str
    diagnostic: types.Diagnostic


def build(failure: TestFailure, root: Path, text_of: TextOf) -> TestDiagnostic | None:
    """The diagnostic of one failing test, or None when its file is unknown."""
    rel = file_of_test(failure)
    if rel is None:
        return None
    uri = from_fs_path(str(root / rel)) or (root / rel).as_uri()
    lines = (text_of(rel) or "").splitlines()
    def_line = definition_line(lines, name_of_test(failure.test_id))
    fail_line = failure.line - 1 if failure.line and 0 < failure.line <= max(len(lines), 1) else None
    where = fail_line if fail_line is not None else (def_line if def_line is not None else 0)
    related = None
    if def_line is not None:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=line_range(lines, def_line)),
                message=f"test {name_of_test(failure.test_id)}",
            )
        ]
    message = failure.message.strip() or ("error" if failure.kind == "error" else "test failed")
    diagnostic = types.Diagnostic(
        range=line_range(lines, where),
        message=f"{failure.test_id}: {message}" if failure.kind == "error" else message,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=failure.test_id,
        related_information=related,
        data={"testId": failure.test_id},
    )
    return TestDiagnostic(failure.test_id, uri, diagnostic)


@dataclass
class DiagnosticsStore:
    """The failing tests we currently show, and which files were published (to clear them)."""

    by_test: dict[str, TestDiagnostic] = field(default_factory=dict)
    published: set[str] = field(default_factory=set)

    def update(self, diagnostics: Iterable[TestDiagnostic], scope: Iterable[str] | None = None) -> None:
        """Replace what a test run covered: everything (`scope` None) or the given test ids."""
        if scope is None:
            self.by_test.clear()
        else:
            for test_id in scope:
                self.by_test.pop(test_id, None)
        for item in diagnostics:
            self.by_test[item.test_id] = item

    def per_file(self) -> dict[str, list[types.Diagnostic]]:
        """Every file to publish: the current failures plus empty lists for files that turned green."""
        out: dict[str, list[types.Diagnostic]] = {uri: [] for uri in self.published}
        for item in self.by_test.values():
            out.setdefault(item.uri, []).append(item.diagnostic)
        return out

    def mark_published(self, uris: Iterable[str]) -> None:
        self.published = {uri for uri in uris if any(i.uri == uri for i in self.by_test.values())}

    def in_file(self, uri: str) -> list[types.Diagnostic]:
        """Diagnostics of a document, however the client spelled its uri (`%3A` vs `:` ...)."""
        path = to_fs_path(uri)
        return [
            item.diagnostic
            for item in self.by_test.values()
            if item.uri == uri or to_fs_path(item.uri) == path
        ]

    @property
    def failing(self) -> bool:
        return bool(self.by_test)
