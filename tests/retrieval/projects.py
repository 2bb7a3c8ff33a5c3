"""Small Python, Node and Rust projects with a known bug, and their real test-runner output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PY_FILES = {
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/calc/__init__.py": "",
    "src/calc/ops.py": (
        "import json\n"
        "\n"
        "\n"
        "def helper(a, b):\n"
        "    return a / b\n"
        "\n"
        "\n"
        "def divide(a, b):\n"
        "    return helper(a, b)\n"
        "\n"
        "\n"
        "def parse(text):\n"
        "    return json.loads(text)\n"
        "\n"
        "\n"
        "def average(values):\n"
        "    return sum(values) / (len(values) + 1)\n"
    ),
    "tests/test_ops.py": (
        "from calc.ops import average, divide, parse\n"
        "\n"
        "\n"
        "def test_divide():\n"
        "    assert divide(1, 0) == 0\n"
        "\n"
        "\n"
        "def test_parse():\n"
        "    assert parse('{oops') == {}\n"
        "\n"
        "\n"
        "def test_average():\n"
        "    assert average([2, 4]) == 3\n"
    ),
}

NODE_FILES = {
    "package.json": '{"name": "shapes", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "lib/shapes.js": (
        "'use strict';\n"
        "\n"
        "function checkSide(side) {\n"
        "  if (side < 0) {\n"
        "    throw new RangeError('negative side: ' + side);\n"
        "  }\n"
        "  return side;\n"
        "}\n"
        "\n"
        "function area(side) {\n"
        "  return checkSide(side) * checkSide(-side);\n"
        "}\n"
        "\n"
        "module.exports = { area, checkSide };\n"
    ),
    "test/shapes.test.js": (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const { area } = require('../lib/shapes');\n"
        "\n"
        "test('area of a square', () => {\n"
        "  assert.strictEqual(area(3), 9);\n"
        "});\n"
    ),
}

RUST_FILES = {
    "Cargo.toml": '[package]\nname = "tally"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/lib.rs": (
        "pub struct Tally {\n"
        "    items: Vec<u32>,\n"
        "}\n"
        "\n"
        "impl Tally {\n"
        "    pub fn new(items: Vec<u32>) -> Self {\n"
        "        Tally { items }\n"
        "    }\n"
        "\n"
        "    pub fn last(&self) -> u32 {\n"
        "        self.items[self.items.len()]\n"
        "    }\n"
        "}\n"
        "\n"
        "#[cfg(test)]\n"
        "mod tests {\n"
        "    use super::*;\n"
        "\n"
        "    #[test]\n"
        "    fn last_item() {\n"
        "        let tally = Tally::new(vec![1, 2, 3]);\n"
        "        assert_eq!(tally.last(), 3);\n"
        "    }\n"
        "}\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> dict[str, bytes]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {rel: text.encode() for rel, text in files.items()}


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
        env={**os.environ, **(env or {})},
    )
    return done.stdout + done.stderr


_PYTEST_CACHE: dict[tuple[str, tuple[str, ...]], str] = {}


def pytest_output(root: Path, *args: str) -> str:
    """pytest's output on `root` (memoized per root and arguments; third-party plugins off for speed)."""
    key = (str(root), args)
    if key not in _PYTEST_CACHE:
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
        _PYTEST_CACHE[key] = run(command, root, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return _PYTEST_CACHE[key]


def node_output(root: Path) -> str:
    return run(["node", "--test"], root)


def cargo_output(root: Path) -> str:
    return run(
        ["cargo", "test", "--offline", "-q"],
        root,
        env={"RUST_BACKTRACE": "1", "CARGO_TARGET_DIR": str(root / "target"), "CARGO_TERM_COLOR": "never"},
    )
