"""pytest's own fixtures imported by name in a generated test are dropped from the import, and the test then runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from greenloop.agent.generate.fixtures import drop_fixture_imports

# the 1.5B model's csv-stats test (generation bench, bf93d33), shortened: it failed to load
TEST = ("import pytest\nfrom pytest import tmp_path\n\n\ndef test_reads(tmp_path):\n"
        "    (tmp_path / 'a.csv').write_text('x\\n1\\n')\n    assert (tmp_path / 'a.csv').read_text() == 'x\\n1\\n'\n")


def _pytest(root: Path, text: str) -> subprocess.CompletedProcess[str]:
    (root / "test_a.py").write_text(text)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_a.py"], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_the_fixture_import_goes_and_the_test_then_loads_and_passes(tmp_path: Path) -> None:
    assert "cannot import name 'tmp_path' from 'pytest'" in _pytest(tmp_path, TEST).stdout
    fixed = drop_fixture_imports("tests/test_a.py", TEST)
    assert fixed == TEST.replace("from pytest import tmp_path\n", "")
    assert _pytest(tmp_path, fixed).returncode == 0
    assert drop_fixture_imports("tests/test_a.py", fixed) == fixed


def test_other_names_stay_and_lines_not_its_own_are_left() -> None:
    assert drop_fixture_imports("t.py", "from pytest import approx, capsys as c, raises\r\n") == \
        "from pytest import approx, raises\r\n"
    for text in ("from pytest import approx\n", "import pytest; from pytest import tmp_path\n",
                 "from pytest import (\n", "from mylib import tmp_path\n"):
        assert drop_fixture_imports("t.py", text) == text, text
    assert drop_fixture_imports("t.js", "from pytest import tmp_path\n") == "from pytest import tmp_path\n"
