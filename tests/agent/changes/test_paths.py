"""Workspace path safety: nothing a plan names may escape the workspace."""

from pathlib import Path

import pytest

from greenloop.agent.changes.paths import UnsafePath, safe_relpath


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


def test_a_path_under_the_sandboxs_workspace_root_is_taken_relative(tmp_path: Path) -> None:
    assert safe_relpath(tmp_path, "/workspace/pkg/mod.py", ("/workspace",)) == "pkg/mod.py"
    assert safe_relpath(tmp_path, "/tmp/sb-1/workspace/a.py", ("/tmp/sb-1/workspace/",)) == "a.py"
    for bad in ("/workspace/../etc/passwd", "/workspace//etc/passwd", "/workspace/", "/workspaces/a.py"):
        with pytest.raises(UnsafePath):
            safe_relpath(tmp_path, bad, ("/workspace",))
    with pytest.raises(UnsafePath, match="absolute"):
        safe_relpath(tmp_path, "/workspace/a.py")  # no alias given: still an absolute path


def test_normal_paths_are_normalized(tmp_path: Path) -> None:
    assert safe_relpath(tmp_path, "./pkg//mod.py") == "pkg/mod.py"
    assert safe_relpath(tmp_path, "pkg/sub/../mod.py") == "pkg/mod.py"
    assert safe_relpath(tmp_path, "dir with space/é.py") == "dir with space/é.py"
