"""Ignore files: what `.gitignore` and `.greenloopignore` leave out of a snapshot, and odd patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop_sandbox import SandboxError, read_tree


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_gitignore_at_any_depth_and_greenloopignore_leave_files_out(tmp_path: Path) -> None:
    ws = _write(tmp_path / "ws", {
        ".gitignore": "*.log\nbuild/\n/secrets.env\n!keep.log\ngenerated.py\n",
        ".greenloopignore": "docs/\n!generated.py\n",
        "app.py": "x = 1\n", "debug.log": "noise", "keep.log": "kept",
        "build/out.py": "built", "build/keep.py": "a folder git ignores is not entered",
        "secrets.env": "TOKEN=1", "sub/secrets.env": "only the top one is anchored",
        "docs/guide.md": "not for the sandbox",
        "pkg/.gitignore": "local_*.py\n", "pkg/local_cfg.py": "mine", "pkg/mod.py": "y = 2\n",
        "generated.py": "z = 3\n",
    })

    snap = read_tree(ws)

    assert set(snap) == {".gitignore", ".greenloopignore", "app.py", "keep.log", "sub/secrets.env",
                         "pkg/.gitignore", "pkg/mod.py", "generated.py"}
    assert snap.ignore.sources == [".gitignore", ".greenloopignore", "pkg/.gitignore"]
    assert snap.ignore.ignored("build/new.py") and snap.ignore.ignored("pkg/local_x.py")
    assert not snap.ignore.ignored("pkg/mod.py")


@pytest.mark.parametrize(("pattern", "line"), [("!", 2), ("trailing\\", 2), ("[z-a].py", 2)])
def test_a_pattern_that_cannot_be_read_names_its_file_and_line(tmp_path: Path, pattern: str, line: int) -> None:
    ws = _write(tmp_path / "ws", {"app.py": "x = 1\n", ".greenloopignore": f"*.tmp\n{pattern}\n"})
    with pytest.raises(SandboxError, match=rf"\.greenloopignore, line {line}: .*fix or remove that line"):
        read_tree(ws)
    assert (ws / "app.py").read_text() == "x = 1\n"  # nothing touched


def test_odd_but_valid_patterns_are_read_as_git_reads_them(tmp_path: Path) -> None:
    ws = _write(tmp_path / "ws", {
        ".gitignore": "# a comment\n\n   \n/\n***\n\\#literal\n\\!bang\n",
        "app.py": "x = 1\n", "#literal": "hash", "!bang": "bang",
    })
    (ws / ".greenloopignore").write_bytes(b"\xfe\xff not utf-8\n")
    # `***` matches everything; `/` matches nothing; a non-UTF-8 byte is read as a replacement character
    assert set(read_tree(ws)) == set()
    (ws / ".gitignore").write_text("# a comment\n\n/\n\\#literal\n\\!bang\n")
    assert set(read_tree(ws)) == {".gitignore", ".greenloopignore", "app.py"}
