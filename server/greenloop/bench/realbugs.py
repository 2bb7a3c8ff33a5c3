"""The realbugs suite's rows: one real bug per row, its workspace tarball, failing test ids and requirements.

The set (benchmarks/data/realbugs, its README; `--suite-file` takes another set of the same format)
is read as it is: `cases.jsonl` names each case,
`cases/<id>/workspace.tar.gz` holds its buggy workspace under one top folder `<id>/`. A workspace
is unpacked only into a cell's own temporary folder; the set is never written.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path
from typing import Any

from greenloop.bench.tasks import Task, text_field

# The set's test tools (its README: every case was built and checked with these). Debian's pytest 7
# in the python image still runs nose-style setup functions, which tqdm's tests have and which
# fail on Python 3.11 (`sys.setcheckinterval`); the set's pytest 9 does not run them.
TEST_TOOLS = ("pytest==9.2.0", "pytest-timeout==2.4.0")
# The set's per-test timeout (`--timeout=60`): youtube-dl-10's test takes over 15 s (the sandbox's
# default) on the buggy code, and then fails with a timeout instead of the case's JSONDecodeError.
CASE_TIMEOUT = 60.0
_ERROR_LINE = re.compile(r"^E\s+([\w.]*(?:Error|Exception))\b", re.MULTILINE)


def realbugs_task(row: dict[str, Any], folder: Path) -> Task:
    """A cases.jsonl row -> a task whose workspace is the case's tarball (checked to exist)."""
    case_id = text_field(row, "id")
    tests = row.get("tests")
    if not isinstance(tests, list) or not tests or not all(isinstance(t, str) and t for t in tests):
        raise ValueError("'tests' must be a non-empty list of pytest ids")
    requirements = row.get("requirements", [])
    if not isinstance(requirements, list) or not all(isinstance(r, str) for r in requirements):
        raise ValueError("'requirements' must be a list of pip requirement strings")
    archive = folder / "cases" / case_id / "workspace.tar.gz"
    if not archive.is_file():
        raise ValueError(f"no workspace tarball at cases/{case_id}/workspace.tar.gz")
    return Task(
        id=case_id,
        kind="realbugs",
        template="python",
        extra={
            "project": str(row.get("project") or case_id.rsplit("-", 1)[0]),
            "tests": list(tests),
            "requirements": [*TEST_TOOLS, *requirements],
            "archive": str(archive),
        },
    )


def recorded_output(archive: Path) -> str:
    """The case's real failing output, as recorded beside its workspace ("" when there is none)."""
    output = archive.parent / "failing_output.txt"
    return output.read_text("utf-8", errors="replace") if output.is_file() else ""


def expected_error(archive: Path) -> str:
    """The exception the case's real failing output names first (`JSONDecodeError`); "" if none or no output."""
    found = _ERROR_LINE.search(recorded_output(archive))
    return found.group(1).rsplit(".", 1)[-1] if found else ""


def unpack(archive: Path, dest: Path, case_id: str) -> Path:
    """Unpack a case's tarball under `dest` and return its workspace (the top folder `<case_id>/`)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")  # no absolute paths, links out or devices
    workspace = dest / case_id
    if not workspace.is_dir():
        raise ValueError(f"{archive} has no top folder {case_id}/")
    return workspace
