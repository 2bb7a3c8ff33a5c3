"""Workspace snapshots: what read_tree takes and leaves, path checks, sync plans, template detection."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from greenloop_sandbox import SandboxError, detect_template, read_tree
from greenloop_sandbox.tree import MAX_FILE_BYTES, SyncState, check_relpath


def test_read_tree_skips_caches_big_files_and_outside_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "my projéct ü"
    (ws / "src dir").mkdir(parents=True)
    (ws / "src dir" / "naïve file.py").write_text("x = 1\n")
    for skipped in (".git", "node_modules", "__pycache__", ".venv", "target", ".greenloop"):
        (ws / skipped).mkdir()
        (ws / skipped / "f").write_text("no")
    (ws / "big.bin").write_bytes(b"0" * (MAX_FILE_BYTES + 1))
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    (ws / "leak.txt").symlink_to(secret)
    (ws / "outside_dir").symlink_to(tmp_path)
    (ws / "inside.py").symlink_to(ws / "src dir" / "naïve file.py")

    snap = read_tree(ws)

    assert set(snap) == {"src dir/naïve file.py", "inside.py"}
    assert snap["inside.py"] == b"x = 1\n"
    assert any(s.startswith("big.bin") for s in snap.skipped)
    assert any(s.startswith("leak.txt") and "outside" in s for s in snap.skipped)
    assert b"host secret" not in b"".join(snap.values())


def test_read_tree_rejects_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        read_tree(tmp_path / "nope")


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "a/../../x", "", "a\\b", "./a"])
def test_check_relpath_rejects_escapes(bad: str) -> None:
    with pytest.raises(SandboxError):
        check_relpath(bad)


def test_sync_plan_sends_only_changes_and_deletions() -> None:
    state = SyncState()
    first = {"a.py": b"1", "b/c.py": b"2"}
    changed, gone = state.plan(first)
    assert set(changed) == {"a.py", "b/c.py"} and gone == []
    state.apply(changed, gone)
    changed, gone = state.plan({"a.py": b"1", "d.py": b"3"})
    assert set(changed) == {"d.py"} and gone == ["b/c.py"]
    state.apply(changed, gone)
    assert state.plan({"a.py": b"1", "d.py": b"3"}) == ({}, [])


@pytest.mark.parametrize(("files", "expected"), [
    ({"Cargo.toml": b"", "src/lib.rs": b""}, "rust"),
    ({"package.json": b"{}", "x.py": b""}, "node"),
    ({"pyproject.toml": b""}, "python"),
    ({"pkg/mod.py": b""}, "python"),
    ({"lib/a.mjs": b""}, "node"),
])
def test_detect_template(files: dict[str, bytes], expected: str) -> None:
    assert detect_template(files) == expected


def test_detect_template_without_markers_names_the_fix() -> None:
    with pytest.raises(SandboxError, match="--template"):
        detect_template({"README.md": b"hi"})


def test_symlinked_dir_loop_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.py").write_text("")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    assert set(read_tree(tmp_path)) == {"a/f.py"}
