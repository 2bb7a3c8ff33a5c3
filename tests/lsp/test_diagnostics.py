"""Failing tests -> diagnostics at the failing line, related to the test function; passing tests clear them."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from greenloop.lsp.diagnostics import DiagnosticsStore, build, definition_line, file_of_test, name_of_test
from greenloop_sandbox.report import TestFailure

TEST_FILE = """import pytest
from calc import add


def test_add():
    assert add(1, 2) == 3


class TestMore:
    @pytest.mark.parametrize("x", [1, 2])
    def test_twice(self, x):
        assert add(x, x) == 2 * x
"""


def texts(rel: str) -> str | None:
    return TEST_FILE if rel == "tests/test_calc.py" else None


def test_names_and_files() -> None:
    assert name_of_test("tests/test_calc.py::TestMore::test_twice[1]") == "test_twice"
    assert name_of_test("suite > adds numbers") == "adds numbers"
    assert file_of_test(TestFailure(test_id="tests/test_calc.py::test_add")) == "tests/test_calc.py"
    assert file_of_test(TestFailure(test_id="calc::tests::adds", file="src/lib.rs")) == "src/lib.rs"
    assert file_of_test(TestFailure(test_id="adds")) is None


def test_definition_lines_across_languages() -> None:
    assert definition_line(TEST_FILE.splitlines(), "test_twice") == 10
    assert definition_line(["#[test]", "fn adds() {", "}"], "adds") == 1
    assert definition_line(["test('adds two', () => {", "});"], "adds two") == 0
    assert definition_line(["x = 1"], "test_add") is None


def test_diagnostic_at_the_failing_line_with_the_test_as_related(tmp_path: Path) -> None:
    failure = TestFailure(
        test_id="tests/test_calc.py::test_add", file="tests/test_calc.py", line=6, message="assert -1 == 3"
    )
    item = build(failure, tmp_path, texts)
    assert item is not None
    d = item.diagnostic
    assert item.uri == (tmp_path / "tests/test_calc.py").as_uri()
    assert d.range == types.Range(types.Position(5, 4), types.Position(5, 25))
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "greenloop"
    assert d.code == "tests/test_calc.py::test_add" and d.data == {"testId": "tests/test_calc.py::test_add"}
    assert d.message == "assert -1 == 3"
    assert d.related_information is not None
    assert d.related_information[0].location.range.start.line == 4


def test_without_a_line_the_def_line_is_used(tmp_path: Path) -> None:
    failure = TestFailure(test_id="tests/test_calc.py::TestMore::test_twice[2]", message="")
    item = build(failure, tmp_path, texts)
    assert item is not None and item.diagnostic.range.start.line == 10
    assert item.diagnostic.message == "test failed"


def test_store_clears_files_that_turned_green(tmp_path: Path) -> None:
    store = DiagnosticsStore()
    a = build(TestFailure(test_id="tests/test_calc.py::test_add", line=6), tmp_path, texts)
    b = build(TestFailure(test_id="tests/test_other.py::test_x"), tmp_path, texts)
    assert a and b
    store.update([a, b])
    first = store.per_file()
    assert sorted(len(v) for v in first.values()) == [1, 1]
    store.mark_published(first)
    assert store.failing
    # Only test_x was re-run (fix of one test) and it passes now: test_add stays.
    store.update([], scope=["tests/test_other.py::test_x"])
    second = store.per_file()
    assert second[b.uri] == [] and len(second[a.uri]) == 1
    store.mark_published(second)
    # A full run that passes clears everything.
    store.update([])
    assert store.per_file() == {a.uri: []}
    assert not store.failing
    assert store.in_file(a.uri) == []
