"""Test collection for the Testing view (collect.py) and the equality assertion's two sides (parsers/assertion.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop_sandbox import DockerSandbox, LocalSandbox, collect_tests, load_template
from greenloop_sandbox.collect import parse_pytest_collect
from greenloop_sandbox.parsers.assertion import split_equality
from tests.sandbox.conftest import project


@pytest.mark.parametrize(("message", "sides"), [
    ("assert -1 == 5\n +  where -1 = add(2, 3)", ("5", "-1")),
    ("AssertionError: assert {'a': 1, 'b': 'x == y'} == {'a': 2, 'b': 'x == y'}\n  Full diff",
     ("{'a': 2, 'b': 'x == y'}", "{'a': 1, 'b': 'x == y'}")),
    ("assert 'a == b' == 'c'", ("'c'", "'a == b'")),
    ("assert x", None),
    ("ZeroDivisionError: division by zero", None),
    ("assert 1 < 2", None),
    ("", None),
])
def test_split_equality(message: str, sides: tuple[str, str] | None) -> None:
    assert split_equality(message) == sides


def test_parse_collect_output_with_an_error() -> None:
    text = """tests/test_a.py::test_one
tests/test_a.py::TestK::test_p[a b]

==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_b.py _______________________
ImportError while importing test module '/w/tests/test_b.py'.
tests/test_b.py:1: in <module>
    import nosuchmod
E   ModuleNotFoundError: No module named 'nosuchmod'
=========================== short test summary info ============================
ERROR tests/test_b.py
2 tests collected, 1 error in 0.05s
"""
    found = parse_pytest_collect(text)
    assert [(t.test_id, t.file) for t in found.tests] == [
        ("tests/test_a.py::test_one", "tests/test_a.py"), ("tests/test_a.py::TestK::test_p[a b]", "tests/test_a.py")]
    [error] = found.errors
    assert (error.test_id, error.file, error.kind) == ("tests/test_b.py", "tests/test_b.py", "error")
    assert error.message == "ModuleNotFoundError: No module named 'nosuchmod'"
    assert "import nosuchmod" in error.traceback


async def test_collect_in_a_real_local_sandbox(tmp_path: Path) -> None:
    files = {"pyproject.toml": b"", "tests/test_x.py": b"def test_x():\n    assert 1\n\ndef test_y():\n    assert 0\n"}
    async with LocalSandbox(load_template("python")) as box:
        await box.sync(files)
        found = await collect_tests(box)
        await box.sync({**files, "tests/test_x.py": b""})
        empty = await collect_tests(box)
    assert [t.test_id for t in found.tests] == ["tests/test_x.py::test_x", "tests/test_x.py::test_y"]
    assert (found.errors, found.ran) == ([], False)
    assert (empty.tests, empty.errors) == ([], [])


@pytest.mark.docker
@pytest.mark.usefixtures("docker_images")
async def test_collect_in_docker_python_and_node() -> None:
    """python through its collect command, node (no collect command) through one test run."""
    async with DockerSandbox(load_template("python")) as box:
        await box.sync(project("python-fail"))
        python = await collect_tests(box)
    ids = [t.test_id for t in python.tests]
    assert "tests/test_calc.py::TestDiv::test_div" in ids and not python.ran
    async with DockerSandbox(load_template("node")) as box:
        await box.sync(project("node-fail"))
        node = await collect_tests(box)
    assert node.ran and node.tests and all(t.test_id for t in node.tests)
