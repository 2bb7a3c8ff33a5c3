"""Frames from real pytest, JUnit, node and cargo output: deepest first, workspace only."""

from __future__ import annotations

import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from greenloop.retrieval import Frame, parse_frames
from tests.retrieval import projects


@pytest.fixture(scope="module")
def py_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("pyproject")
    files = projects.write(root, projects.PY_FILES)
    return root, sorted(files)


def _section(output: str, test: str) -> str:
    start = output.index(f" {test} ")
    end = output.find("\n___", start + 1)
    return output[start : end if end > 0 else len(output)]


@pytest.mark.parametrize("style", ["long", "short", "native"])
def test_pytest_tracebacks_deepest_first(py_project: tuple[Path, list[str]], style: str) -> None:
    root, paths = py_project
    output = projects.pytest_output(root, f"--tb={style}")
    frames = parse_frames(_section(output, "test_divide"), paths)
    assert [(f.path, f.line) for f in frames] == [
        ("src/calc/ops.py", 5), ("src/calc/ops.py", 9), ("tests/test_ops.py", 5)
    ]
    if style != "long":  # long tracebacks print no function names
        assert frames[1].function == "divide"


def test_pytest_drops_stdlib_frames(py_project: tuple[Path, list[str]]) -> None:
    root, paths = py_project
    output = projects.pytest_output(root, "--tb=long")
    assert "json/decoder.py" in output  # the real traceback goes through the stdlib...
    frames = parse_frames(_section(output, "test_parse"), paths)
    assert [(f.path, f.line) for f in frames] == [("src/calc/ops.py", 13), ("tests/test_ops.py", 9)]


def test_pytest_line_style_and_whole_output(py_project: tuple[Path, list[str]]) -> None:
    root, paths = py_project
    output = projects.pytest_output(root, "--tb=line")
    frames = parse_frames(output, paths)
    assert Frame("src/calc/ops.py", 5, None) in frames and Frame("tests/test_ops.py", 13, None) in frames


def test_pytest_assertion_rewriting_keeps_the_test_frame(py_project: tuple[Path, list[str]]) -> None:
    root, paths = py_project
    output = projects.pytest_output(root, "--tb=long")
    section = _section(output, "test_average")
    assert "where 2.0 = average([2, 4])" in section
    assert [(f.path, f.line) for f in parse_frames(section, paths)] == [("tests/test_ops.py", 13)]


def test_pytest_collection_errors(tmp_path: Path) -> None:
    files = projects.write(tmp_path, {
        **projects.PY_FILES,
        "src/calc/broken.py": "def fine():\n    return 1\n\ndef broken(:\n    pass\n",
        "tests/test_broken.py": "from calc.broken import fine\n\n\ndef test_fine():\n    assert fine() == 1\n",
        "tests/test_missing.py": "import calc.no_such_module\n",
    })
    output = projects.pytest_output(tmp_path, "tests/test_broken.py", "tests/test_missing.py")
    assert "ERROR collecting" in output
    frames = parse_frames(output, list(files))
    assert (frames[0].path, frames[0].line) == ("src/calc/broken.py", 4)  # the SyntaxError, deepest
    assert ("tests/test_missing.py", 1) in [(f.path, f.line) for f in frames]


def test_junit_failure_text(py_project: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, paths = py_project
    report = tmp_path / "junit.xml"
    projects.pytest_output(root, f"--junitxml={report}")
    failure = next(
        case.find("failure") for case in ET.parse(report).iter("testcase") if case.get("name") == "test_divide"
    )
    assert failure is not None
    frames = parse_frames(failure.text or "", paths)
    assert [(f.path, f.line) for f in frames][:2] == [("src/calc/ops.py", 5), ("src/calc/ops.py", 9)]


def test_python_traceback_from_a_plain_run(py_project: tuple[Path, list[str]]) -> None:
    root, paths = py_project
    script = "import sys; sys.path.insert(0, 'src'); from calc.ops import divide; divide(1, 0)"
    output = projects.run([sys.executable, "-c", script], root)
    assert "Traceback (most recent call last)" in output
    assert [(f.path, f.line, f.function) for f in parse_frames(output, paths)] == [
        ("src/calc/ops.py", 5, "helper"), ("src/calc/ops.py", 9, "divide")
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
def test_node_test_runner_stack(tmp_path: Path) -> None:
    files = projects.write(tmp_path, projects.NODE_FILES)
    output = projects.node_output(tmp_path)
    assert "node:internal" in output
    frames = parse_frames(output, list(files))
    assert [(f.path, f.line, f.function) for f in frames][:3] == [
        ("lib/shapes.js", 5, "checkSide"), ("lib/shapes.js", 11, "area"),
        ("test/shapes.test.js", 6, "TestContext.<anonymous>"),
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
def test_node_uncaught_error_stack(tmp_path: Path) -> None:
    files = projects.write(tmp_path, projects.NODE_FILES)
    output = projects.run(["node", "-e", "require('./lib/shapes').area(2)"], tmp_path)
    assert "    at " in output
    frames = parse_frames(output, list(files))
    assert [(f.path, f.line) for f in frames][:2] == [("lib/shapes.js", 5), ("lib/shapes.js", 11)]


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is part of the machine image")
def test_rust_panic_and_backtrace(tmp_path: Path) -> None:
    files = projects.write(tmp_path, projects.RUST_FILES)
    output = projects.cargo_output(tmp_path)
    assert "panicked at src/lib.rs:11" in output and "/rustc/" in output
    frames = parse_frames(output, list(files))
    assert [(f.path, f.line) for f in frames] == [("src/lib.rs", 11), ("src/lib.rs", 22), ("src/lib.rs", 20)]
    assert frames[0].function == "last"


def test_old_rust_panic_format_and_java_frames() -> None:
    paths = ["src/lib.rs", "src/main/java/com/acme/Calc.java"]
    old = "thread 'tests::t' panicked at 'attempt to divide by zero', src/lib.rs:7:9\n"
    assert parse_frames(old, paths) == [Frame("src/lib.rs", 7, None)]
    java = "java.lang.ArithmeticException: / by zero\n\tat com.acme.Calc.div(Calc.java:12)\n\tat java.base/jdk.internal.X.y(X.java:1)\n"
    assert parse_frames(java, paths) == [Frame("src/main/java/com/acme/Calc.java", 12, "div")]


def test_unknown_runner_falls_back_to_path_line_and_no_frames_is_empty() -> None:
    paths = ["app/server.go", "app/util.go"]
    text = "FAIL: TestServe\n    server.go:41: expected 200, got 500\n--- in /home/ci/app/util.go:7 ---\n"
    assert parse_frames(text, paths) == [Frame("app/server.go", 41, None), Frame("app/util.go", 7, None)]
    assert parse_frames("AssertionError: expected 3 but got 2", paths) == []
    assert parse_frames("", paths) == []


def test_faulthandler_dump_of_a_hung_call(tmp_path: Path) -> None:
    """A real faulthandler dump (what pytest-timeout and the sandbox print for a hung test): innermost first."""
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": "import time\n\n\ndef spin():\n    while True:\n        time.sleep(0.01)\n\n\n"
                      "def run():\n    return spin()\n",
        "tests/test_mod.py": "import faulthandler\n\nfrom pkg.mod import run\n\n\ndef test_run():\n"
                             "    faulthandler.dump_traceback_later(0.2, exit=True)\n    run()\n",
    }
    projects.write(tmp_path, files)
    command = [sys.executable, "-c", "import sys; sys.path.insert(0, '.'); from tests.test_mod import test_run; test_run()"]
    output = projects.run(command, tmp_path, timeout=60)
    assert "(most recent call first)" in output and ", line 6 in spin" in output
    frames = parse_frames(output.replace(str(tmp_path), "/workspace"), sorted(files))
    assert [(f.path, f.line, f.function) for f in frames] == [
        ("pkg/mod.py", 6, "spin"), ("pkg/mod.py", 10, "run"), ("tests/test_mod.py", 8, "test_run")
    ]
