"""realbugs under coverage: each case's failing tests and their files' passing tests, per-test lines.

A case whose tests need no third-party package runs in the Docker python
sandbox (`greenloop_sandbox.run_spectrum`, the path the fix loop takes); the
others run the same runner (run_spectrum.py) on the host, in a venv with the
case's requirements (`--host-python`), since the sandbox cannot reach a
registry. Spectra are cached as JSON per case, so a re-run ranks without
re-running the tests.
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


async def in_docker(case: realbugs.Case) -> Run:
    started = time.perf_counter()
    limits = Limits(test_case_timeout=CASE_TIMEOUT, exec_timeout=600)
    async with open_sandbox("python", backend="docker", limits=limits, label="bench-coverage") as sandbox:
        await sandbox.sync(await asyncio.to_thread(all_files, case))
        spectrum = await run_spectrum(sandbox, list(case.tests), max_tests=MAX_TESTS, seconds=SECONDS)
    return Run(spectrum, time.perf_counter() - started, "docker")


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
            if not requirements(case):
                run = await in_docker(case)
            elif host_python and shutil.which(host_python):
                run = await asyncio.to_thread(on_host, case, host_python)
            else:
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
