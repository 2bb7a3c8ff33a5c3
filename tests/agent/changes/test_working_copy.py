"""WorkingCopy: overlays win over disk, changes diff against the base, apply_changes guards the disk."""

from pathlib import Path

import pytest

from greenloop.agent import apply_changes
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.errors import GreenloopError


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    return tmp_path


def test_overlay_replaces_disk_text(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    copy = WorkingCopy.from_workspace(ws, {"pkg/mod.py": "def f():\n    return 2\n"})
    assert copy.read("pkg/mod.py") == "def f():\n    return 2\n"
    assert copy.read("blob.bin") is None  # binary: not text
    assert copy.changes().files == []  # the overlay is the base, not a change


def test_an_unsaved_buffer_of_an_ignored_file_stays_out(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / ".gitignore").write_text("local/\n")
    copy = WorkingCopy.from_workspace(ws, {"local/scratch.py": "secret = 1\n", "pkg/new.py": "y = 1\n"})
    assert copy.paths() == [".gitignore", "blob.bin", "pkg/mod.py", "pkg/new.py"]


def test_changes_and_diff(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    copy = WorkingCopy.from_workspace(ws)
    copy.write("pkg/mod.py", "def f():\n    return 3\n")
    copy.write("pkg/new.py", "X = 1\n")
    changes = copy.changes(packages=["attrs==23.2.0"])
    assert [c.path for c in changes.files] == ["pkg/mod.py", "pkg/new.py"]
    assert changes.files[1].before is None
    assert "-    return 1" in changes.diff and "+    return 3" in changes.diff
    assert "+++ b/pkg/new.py" in changes.diff
    assert changes.packages == ["attrs==23.2.0"]
    # nothing on disk changed
    assert (ws / "pkg" / "mod.py").read_text() == "def f():\n    return 1\n"
    assert not (ws / "pkg" / "new.py").exists()


def test_apply_changes_writes_and_refuses_stale(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    copy = WorkingCopy.from_workspace(ws)
    copy.write("pkg/mod.py", "def f():\n    return 3\n")
    changes = copy.changes()
    (ws / "pkg" / "mod.py").write_text("edited by the user meanwhile\n")
    with pytest.raises(GreenloopError, match="changed since"):
        apply_changes(ws, changes)
    assert (ws / "pkg" / "mod.py").read_text() == "edited by the user meanwhile\n"
    (ws / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    assert apply_changes(ws, changes) == ["pkg/mod.py"]
    assert (ws / "pkg" / "mod.py").read_text() == "def f():\n    return 3\n"
