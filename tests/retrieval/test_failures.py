"""Runner output -> failures: pytest cut to its FAILURES blocks, node's TAP split per failing subtest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greenloop.retrieval.failures import failure_blocks, from_text
from tests.retrieval import projects, shaped


def test_pytest_warnings_summary_is_not_failure_text(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/old.py": "import warnings\n\n\ndef legacy():\n    warnings.warn('old', DeprecationWarning)\n    return 1\n",
        "tests/test_old.py": "from pkg.old import legacy\n\n\ndef test_legacy():\n    assert legacy() == 2\n",
    }
    projects.write(tmp_path, files)
    output = projects.pytest_output(tmp_path, "-W", "always::DeprecationWarning", "tests")
    assert "warnings summary" in output and "pkg/old.py:5" in output
    blocks = failure_blocks(output)
    assert "test_legacy" in blocks and "assert 1 == 2" in blocks
    assert "warnings summary" not in blocks and "pkg/old.py:5" not in blocks
    assert "FAILED tests/test_old.py::test_legacy" in blocks
    [failure] = from_text(output)
    assert failure.test_id == "tests/test_old.py::test_legacy"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
def test_node_tap_output_is_one_failure_per_failing_subtest(tmp_path: Path) -> None:
    projects.write(tmp_path, shaped.node_files("hub"))
    failures = from_text(projects.node_output(tmp_path))
    assert [f.test_id for f in failures] == ["pull matches", "push matches"]
    assert all("lib/types.js:10" in f.text for f in failures)
    assert "rules/push.js" in failures[1].text and "rules/push.js" not in failures[0].text
