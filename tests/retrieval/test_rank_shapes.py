"""Ranking on real-shaped projects: shared types every test touches, one module and test file per feature.

Each project runs its real test runner. A bug in a feature module must rank
that module first, not the shared type; a crash inside the shared type that
every failing test's traceback ends in must rank the type first; test code is
never a target.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greenloop.retrieval import Location, RepoIndex, locate, spec_locations
from tests.retrieval import projects, shaped

NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
CARGO = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is part of the machine image")


async def _rank(root: Path, files: dict[str, str], output: str) -> tuple[list[Location], list[Location]]:
    index = RepoIndex()
    await index.update(projects.write(root, files))
    return await locate(index, output, top_k=5), await spec_locations(index, output)


def _no_test_targets(found: list[Location]) -> None:
    assert found and all(loc.role == "target" for loc in found)
    assert not any("test" in loc.path.split("/")[0] or loc.symbol.startswith(("test", "tests.")) for loc in found)


async def test_python_feature_bug_ranks_the_imported_module_first(tmp_path: Path) -> None:
    projects.write(tmp_path, shaped.python_files("push"))
    output = projects.pytest_output(tmp_path, "tests/rules/test_git_push.py")
    found, spec = await _rank(tmp_path, shaped.python_files("push"), output)
    assert (found[0].path, found[0].symbol) == ("tool/rules/git_push.py", "get_new_command")
    assert found[0].path != "tool/types.py" and found[1].path == "tool/rules/git_push.py"
    assert "tool/types.py" not in {loc.path for loc in found[:2]}
    _no_test_targets(found)
    assert ("tests/rules/test_git_push.py", "test_get_new_command", "spec") in {
        (loc.path, loc.symbol, loc.role) for loc in spec
    }


async def test_python_hub_ranks_first_when_every_traceback_ends_in_it(tmp_path: Path) -> None:
    projects.write(tmp_path, shaped.python_files("hub"))
    output = projects.pytest_output(tmp_path, "tests")
    assert "3 failed" in output
    found, _ = await _rank(tmp_path, shaped.python_files("hub"), output)
    assert (found[0].path, found[0].symbol) == ("tool/types.py", "Command.parts")
    assert {s.name for s in found[0].signals} >= {"frame", "spread"}
    _no_test_targets(found)


async def test_python_hub_in_one_traceback_is_not_first(tmp_path: Path) -> None:
    """One failing test crashing inside the shared type: the rule it tests leads, the type follows."""
    projects.write(tmp_path, shaped.python_files("hub"))
    output = projects.pytest_output(tmp_path, "tests/rules/test_git_push.py::test_match")
    found, _ = await _rank(tmp_path, shaped.python_files("hub"), output)
    assert (found[0].path, found[0].symbol) == ("tool/rules/git_push.py", "match")
    assert "Command.parts" in [loc.symbol for loc in found[:3]]


@NODE
async def test_node_feature_bug_and_hub(tmp_path: Path) -> None:
    feature, hub = tmp_path / "feature", tmp_path / "hub"
    projects.write(feature, shaped.node_files("push"))
    found, spec = await _rank(feature, shaped.node_files("push"), projects.node_output(feature))
    assert (found[0].path, found[0].symbol) == ("lib/rules/push.js", "getNewCommand")
    assert "lib/types.js" not in {loc.path for loc in found[:2]}
    _no_test_targets(found)
    assert spec and all(loc.path.startswith("test/") for loc in spec)
    # the failing test's own callback is indexed as a test (node:test's `test('push fixes', () => ...)`)
    assert ("test/push.test.js", "push fixes", "spec") in {(loc.path, loc.symbol, loc.role) for loc in spec}
    projects.write(hub, shaped.node_files("hub"))
    found, _ = await _rank(hub, shaped.node_files("hub"), projects.node_output(hub))
    assert (found[0].path, found[0].symbol) == ("lib/types.js", "Command.parts")
    _no_test_targets(found)


@CARGO
async def test_rust_feature_bug_and_hub(tmp_path: Path) -> None:
    feature, hub = tmp_path / "feature", tmp_path / "hub"
    projects.write(feature, shaped.rust_files("push"))
    found, spec = await _rank(feature, shaped.rust_files("push"), projects.cargo_output(feature))
    assert (found[0].path, found[0].symbol) == ("src/rules/push.rs", "new_command")
    assert "src/types.rs" not in {loc.path for loc in found[:2]}
    _no_test_targets(found)
    assert "tests.push_fixes" in [loc.symbol for loc in spec]
    projects.write(hub, shaped.rust_files("hub"))
    found, _ = await _rank(hub, shaped.rust_files("hub"), projects.cargo_output(hub))
    assert (found[0].path, found[0].symbol) == ("src/types.rs", "Command.parts")
    _no_test_targets(found)


MATRIX = {
    "matrix.py": "def shape(m):\n    return len(m), len(m[0]) if m else 0\n\n\n"
                 "def transpose(m):\n    return [list(row) for row in zip(*m)]\n\n\n"
                 "def add(a, b):\n    return [[x + y for x, y in zip(r, s)] for r, s in zip(a, b)]\n\n\n"
                 "def multiply(a, b):\n    cols = transpose(b)\n"
                 "    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]\n",
    "test_matrix.py": "import pytest\n\nfrom matrix import add, multiply, shape, transpose\n\n\n"
                      "def test_mismatched_shapes_are_rejected():\n    a = [[1, 2, 3], [4, 5, 6]]\n"
                      "    assert shape(a) == (2, 3)\n    b = transpose(a)\n    assert shape(b) == (3, 2)\n"
                      "    with pytest.raises(ValueError):\n        multiply(a, a)\n",
}


async def test_a_block_that_did_not_raise_points_at_the_call_in_its_body(tmp_path: Path) -> None:
    """pytest stops at `with pytest.raises(...)`: the call that should have raised is the block's body."""
    projects.write(tmp_path, MATRIX)
    output = projects.pytest_output(tmp_path, "test_matrix.py")
    assert "DID NOT RAISE" in output and ">       with pytest.raises(ValueError):" in output
    found, _ = await _rank(tmp_path, MATRIX, output)
    assert found[0].symbol == "multiply"
    assert "failing_line" in {s.name for s in found[0].signals}
