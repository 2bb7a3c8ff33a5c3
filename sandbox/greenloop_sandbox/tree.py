"""Workspace snapshots: reading a tree safely, validating paths, and diffing snapshots."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from greenloop_sandbox.ignore import IgnoreRules
from greenloop_sandbox.languages import Language, languages, template_names
from greenloop_sandbox.values import SandboxError

log = logging.getLogger(__name__)

SKIP_DIRS = frozenset({".git", "node_modules", "target", "__pycache__", ".venv", ".greenloop",
                       ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hg", ".svn"})
MAX_FILE_BYTES = 2 * 1024 * 1024


class Snapshot(dict[str, bytes]):
    """A workspace snapshot (relative posix path -> bytes); `skipped` notes what was left out and why.

    `ignore` holds the workspace's ignore files (`ignore.py`): what they match is not in the snapshot,
    and an editor's unsaved buffer of such a file must not be added to it either.
    """

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[str] = []
        self.ignore = IgnoreRules()


def read_tree(root: Path) -> Snapshot:
    """Snapshot `root`: regular files only, no symlink followed out of it, big files, caches and what the
    workspace's `.gitignore` / `.greenloopignore` files match left out (SandboxError for an unreadable one)."""
    root = Path(root)
    if not root.is_dir():
        raise SandboxError(f"{root}: not a directory; pass the workspace folder.")
    real_root = root.resolve()
    snap = Snapshot()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        folder = Path(dirpath).relative_to(root).as_posix()
        folder = "" if folder == "." else folder
        snap.ignore.read_folder(root, folder)
        prefix = f"{folder}/" if folder else ""
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not _is_link(Path(dirpath, d))
                             and not snap.ignore.ignored(prefix + d, is_dir=True))
        for name in sorted(filenames):
            rel = prefix + name
            if not snap.ignore.ignored(rel):
                _add_file(snap, Path(dirpath, name), rel, real_root)
    return snap


def _is_link(path: Path) -> bool:
    return path.is_symlink()


def _add_file(snap: Snapshot, path: Path, rel: str, real_root: Path) -> None:
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            target = path.resolve()
            if not target.is_relative_to(real_root) or not target.is_file():
                snap.skipped.append(f"{rel}: symlink pointing outside the workspace (not followed)")
                return
            st = target.stat()
            path = target
        if not stat.S_ISREG(st.st_mode):
            return
        if st.st_size > MAX_FILE_BYTES:
            snap.skipped.append(f"{rel}: {st.st_size} bytes, over the {MAX_FILE_BYTES} byte limit")
            return
        snap[rel] = path.read_bytes()
    except OSError as exc:
        snap.skipped.append(f"{rel}: unreadable ({exc.strerror})")


def check_relpath(rel: str) -> str:
    """`rel` if it is a clean workspace-relative posix path, else SandboxError."""
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts or "\\" in rel or "\0" in rel or p.as_posix() != rel:
        raise SandboxError(f"{rel!r}: not a clean path inside the workspace (relative, no '..').")
    return rel


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class SyncState:
    """What a sandbox's workspace holds now (path -> sha256), to send only what changed."""

    hashes: dict[str, str] = field(default_factory=dict)

    def plan(
        self, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()
    ) -> tuple[dict[str, bytes], list[str]]:
        """(files to write, paths to delete) that turn the current state into `files`."""
        changed = {check_relpath(p): d for p, d in files.items() if self.hashes.get(p) != digest(d)}
        gone = sorted((set(self.hashes) - set(files)) | {p for p in deleted if p in self.hashes})
        return changed, [check_relpath(p) for p in gone]

    def apply(self, changed: Mapping[str, bytes], gone: list[str]) -> None:
        for p, d in changed.items():
            self.hashes[p] = digest(d)
        for p in gone:
            self.hashes.pop(p, None)


def is_executable_text(data: bytes) -> bool:
    """Scripts keep working after sync: a shebang makes the file executable."""
    return data.startswith(b"#!")


def detect_template(files: Mapping[str, bytes]) -> str:
    """The template of the language whose manifest is at the top (`Cargo.toml`), else of most source files.

    Several languages' manifests: the lowest `detect_rank` wins; SandboxError when nothing fits.
    """
    top = {n for n in files if "/" not in n}
    for language in languages():
        if top & set(language.manifests):
            return language.name
    counts = Counter(owner.name for n in files if (owner := _source_owner(n)) is not None)
    if counts:
        # ties go to the highest rank (python): a stray script beside a project's code changes nothing
        return max(languages(), key=lambda language: (counts[language.name], language.detect_rank)).name
    manifests = ", ".join(language.manifests[0] for language in languages())
    raise SandboxError(
        f"Cannot tell the workspace's language (no {manifests} or source files); "
        f"pass --template {'|'.join(template_names())}."
    )


def _source_owner(path: str) -> Language | None:
    suffix = PurePosixPath(path).suffix.lower()
    return next((language for language in languages() if suffix in language.grammars), None)
