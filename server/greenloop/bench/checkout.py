"""The code a bench cell ran: the commit of the checkout that holds greenloop, and whether its code was changed.

Read once per process, at the first cell: the code a process runs is the code it imported, so a commit made
in the checkout while a bench runs does not change what its cells ran. Dirty means a change to the code
under `server/` or `sandbox/` (modified, staged, deleted or new, not ignored) that the commit does not hold;
outputs written elsewhere in the checkout (a bench's report under docs/benchmarks/) are not the code.
Outside a git checkout (an installed wheel) or without git, both are unknown.
"""

from __future__ import annotations

import functools
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from greenloop.bench.state import CellResult
from greenloop.bench.suites import repo_root

UNKNOWN = "unknown"
CODE_PATHS = ("server", "sandbox")  # the folders whose code a cell runs
_GIT_SECONDS = 30.0


@dataclass(frozen=True)
class CodeVersion:
    """A commit (or "unknown") and whether the code differed from it (None: unknown)."""

    commit: str
    dirty: bool | None

    def label(self) -> str:
        if self.commit == UNKNOWN:
            return "unknown (not a git checkout)"
        state = "unknown" if self.dirty is None else "dirty" if self.dirty else "clean"
        return f"{self.commit[:12]} ({state})"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=_GIT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def read_code_version(root: Path) -> CodeVersion:
    """The commit `git rev-parse HEAD` names in `root`, and whether `git status --porcelain` lists code changes.

    Unknown unless `root` holds greenloop's source (`server/greenloop`): an installed greenloop's folder may sit
    inside some other project's repository, whose commit says nothing about greenloop's code.
    """
    if not (root / "server" / "greenloop").is_dir():
        return CodeVersion(UNKNOWN, None)
    head = _git(root, "rev-parse", "HEAD")
    if head is None or not head.strip():
        return CodeVersion(UNKNOWN, None)
    status = _git(root, "status", "--porcelain", "--", *CODE_PATHS)
    return CodeVersion(head.strip(), None if status is None else bool(status.strip()))


@functools.cache
def code_version() -> CodeVersion:
    """This process's code: the checkout `suites.repo_root()`, read at the first call."""
    return read_code_version(repo_root())


def code_versions(results: Iterable[CellResult]) -> dict[str, int]:
    """How many cells ran at each commit, for a report's header; cells from before commits were recorded
    (an older bench's state file) count as "not recorded"."""
    counts = Counter(CodeVersion(r.commit, r.dirty).label() if r.commit else "not recorded" for r in results)
    return dict(sorted(counts.items()))
