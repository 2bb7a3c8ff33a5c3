"""realbugs under coverage: each case's failing tests and their files' passing tests, per-test lines.

Each case runs in the Docker python sandbox (`greenloop_sandbox.run_spectrum`,
the path the fix loop takes), its requirements installed first as the fix
bench does (resolved on the host, installed offline in a cached layer). A case
whose requirements do not install runs the same runner (run_spectrum.py) on
the host, in a venv that has them (`--host-python`). Spectra are cached as
JSON per case, so a re-run ranks without re-running the tests. `HOST_PROJECTS`
run on the host (see there why).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import realbugs
from greenloop_sandbox import Limits, Spectrum, open_sandbox, run_spectrum
from greenloop_sandbox.spectrum import parse_spectrum
from greenloop_sandbox.templates import TEMPLATES_DIR

# Projects whose tests break in the sandbox's Debian pytest (7.2) but not in the pytest the set was
# built with (9.2): pytest 7 still runs nose-style module setup, and tqdm's calls
# sys.setcheckinterval, gone in Python 3.11, so every tqdm test errors there. They run on the host.
HOST_PROJECTS = frozenset({"tqdm"})
MAX_TESTS = 200
SECONDS = 60.0
CASE_TIMEOUT = 30.0


@dataclass
class Run:
    spectrum: Spectrum
    seconds: float  # wall time of the coverage pass (sync, run, parse)
    where: str  # "docker" | "host"


def requirements(case: realbugs.Case) -> list[str]:
    for line in (realbugs.DATA / "cases.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == case.id:
            return list(row.get("requirements", []))
    return []


def all_files(case: realbugs.Case) -> dict[str, bytes]:
    """Every file of the workspace (test data too), by relative path."""
    out: dict[str, bytes] = {}
    with tarfile.open(case.folder / "workspace.tar.gz") as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None and "/" in member.name:
                out[member.name.split("/", 1)[1]] = handle.read()
    return out


async def in_docker(case: realbugs.Case) -> Run | None:
    """The pass in the Docker sandbox, the case's requirements installed first (offline layers, cached);
    None when they do not install. The time leaves the install out: a fix run has installed them already."""
    limits = Limits(test_case_timeout=CASE_TIMEOUT, exec_timeout=600)
    started = time.perf_counter()
    async with open_sandbox("python", backend="docker", limits=limits, label="bench-coverage") as sandbox:
        wanted = requirements(case)
        before = time.perf_counter()
        if wanted and not (await sandbox.install(wanted)).ok:
            return None
        installing = time.perf_counter() - before
        await sandbox.sync(await asyncio.to_thread(all_files, case))
        spectrum = await run_spectrum(sandbox, list(case.tests), max_tests=MAX_TESTS, seconds=SECONDS)
    return Run(spectrum, time.perf_counter() - started - installing, "docker")


def on_host(case: realbugs.Case, python: str) -> Run:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="realbugs-cov-") as tmp:
        with tarfile.open(case.folder / "workspace.tar.gz") as archive:
            archive.extractall(tmp, filter="data")
        home = Path(tmp) / "home"
        home.mkdir()
        runner = TEMPLATES_DIR / "python" / "run_spectrum.py"
        argv = [python, str(runner), *(f"--focus={t}" for t in case.tests), "--max-tests", str(MAX_TESTS),
                "--seconds", str(SECONDS), "--", f"--timeout={CASE_TIMEOUT:g}", "-o", "timeout_method=signal"]
        env = {**os.environ, "HOME": str(home), "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run(argv, cwd=Path(tmp) / case.id, env=env, capture_output=True, text=True,
                              timeout=SECONDS + 600, check=False)
    spectrum = parse_spectrum(proc.stdout)
    if not spectrum.tests and not spectrum.note:
        spectrum.note = proc.stderr[-300:]
    return Run(spectrum, time.perf_counter() - started, "host")


async def spectra(cases: list[realbugs.Case], cache: Path, host_python: str | None) -> dict[str, Run]:
    """Case id -> its coverage run (from the cache when there)."""
    out: dict[str, Run] = {}
    for case in cases:
        run = await asyncio.to_thread(_load, cache / f"{case.id}.json")
        if run is None:
            run = None if case.project in HOST_PROJECTS else await in_docker(case)
            if run is None and host_python and shutil.which(host_python):
                run = await asyncio.to_thread(on_host, case, host_python)
            if run is None:
                continue
            await asyncio.to_thread(_save, cache / f"{case.id}.json", run)
        out[case.id] = run
    return out


def _load(path: Path) -> Run | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return Run(Spectrum.model_validate(data["spectrum"]), data["seconds"], data["where"])


def _save(path: Path, run: Run) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"spectrum": run.spectrum.model_dump(), "seconds": run.seconds, "where": run.where}))
