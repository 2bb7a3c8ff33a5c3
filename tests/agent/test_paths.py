"""Workspace path safety: nothing a plan names may escape the workspace."""

from pathlib import Path

import pytest

from greenloop.agent.paths import UnsafePath, safe_relpath


@pytest.mark.parametrize(
    "bad", ["/etc/passwd", "../outside.py", "a/../../b.py", "..", "", ".git/config", "C:/x.py", "<file>", "src/<module>.py"]
)
def test_escaping_or_protected_paths_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UnsafePath):
        safe_relpath(tmp_path, bad)


def test_symlink_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(outside)
    with pytest.raises(UnsafePath, match="symlink"):
        safe_relpath(ws, "link/evil.py")


def test_normal_paths_are_normalized(tmp_path: Path) -> None:
    assert safe_relpath(tmp_path, "./pkg//mod.py") == "pkg/mod.py"
    assert safe_relpath(tmp_path, "pkg/sub/../mod.py") == "pkg/mod.py"
    assert safe_relpath(tmp_path, "dir with space/é.py") == "dir with space/é.py"
