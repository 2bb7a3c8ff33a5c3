"""A pip wheelhouse for an offline install, fetched as files only: wheels, and sdists built in isolation.

`pip download --only-binary=:all:` fetches wheels; pip reads their metadata from the file, so no
package code runs. A requirement with no wheel (`No matching distribution found for X`) has its sdist
fetched as a file (pip_index.py) and handed to `build`, which makes a wheel of it in a container
(sdist_build.py); the next download finds that wheel beside the others and resolves its dependencies. A
build requirement only the sdist's setup code names (`setup_requires`: pip asks for it inside the build and
finds none) is fetched as wheels too and the build tried again, a bounded number of times.
Without `build` (the local backend) such a requirement is refused with a message saying why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import time
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from greenloop_sandbox.packages import run_host
from greenloop_sandbox.pip_index import IndexFile, build_requires, fetch_sdist
from greenloop_sandbox.values import ExecResult, InstalledFile, InstallResult, SandboxError

Build = Callable[[Path, Path, Path], Awaitable[ExecResult]]  # (sdist, its build wheels, where the wheel goes)
MAX_BUILDS = 5
MAX_SETUP_REQUIRES = 3  # builds of one sdist again, each with a build requirement its setup code named
PYTHON = "3.11"  # the image's python (Debian bookworm)
NO_WHEEL = re.compile(r"No matching distribution found for (\S+)")
SOURCE_ONLY = ("{spec} has no wheel for this Python, only a source distribution, and building one runs "
               "its setup code. greenloop does not build packages on this machine: use the Docker backend "
               "(sandbox.backend = \"docker\"), which builds it in a container without network, or a version "
               "published as a wheel.")


def wheel_argv(packages: list[str], dest: Path) -> list[str]:
    """Fetch wheels only (never an sdist, whose metadata pip would build here) for the image's python."""
    return [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--only-binary=:all:",
            "--python-version", PYTHON, "-d", str(dest), "--find-links", str(dest), *packages]


async def resolve_wheels(packages: list[str], dest: Path, work: Path, build: Build | None,
                         timeout: float = 600) -> InstallResult:  # noqa: ASYNC109 (each host command's timeout)
    """Every wheel `packages` need in `dest`; sdists fetched into `work` and built by `build`."""
    start = time.monotonic()
    built: dict[str, IndexFile] = {}  # a built wheel's file name -> the sdist it came from
    tried: set[str] = set()
    for _ in range(MAX_BUILDS + 1):
        res = await run_host(wheel_argv(packages, dest), cwd=dest, timeout=timeout)
        if res.ok:
            return InstallResult(0, res.stdout, res.stderr, time.monotonic() - start,
                                 files=installed_files(dest, built))
        match = NO_WHEEL.search(res.stderr + res.stdout)
        if match is None or match[1] in tried:
            return _failed(res.stderr + res.stdout, start, res.timed_out)
        spec = match[1]
        tried.add(spec)
        if build is None:
            return _failed(SOURCE_ONLY.format(spec=spec), start)
        try:
            sdist = await fetch_sdist(spec, work / "sdist")
        except SandboxError as exc:
            return _failed(f"{spec}: no wheel for this Python, and {exc}", start)
        made = await _build(sdist, work, dest, build, timeout)
        if isinstance(made, str):
            return _failed(made, start)
        built.update(dict.fromkeys(made, sdist))
    return _failed(f"more than {MAX_BUILDS} packages would have to be built from source ({', '.join(sorted(tried))} "
                   "and more); not installed.", start)


async def _build(sdist: IndexFile, work: Path, dest: Path, build: Build, timeout: float) -> list[str] | str:  # noqa: ASYNC109
    """The names of the wheels built from `sdist` into `dest`, or why there are none."""
    requires = build_requires(work / "sdist" / sdist.filename)
    wheels = work / "build-wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    got = await run_host(wheel_argv(requires, wheels), cwd=wheels, timeout=timeout)
    if not got.ok:
        return (f"building {sdist.filename} needs {', '.join(requires)}, which could not be fetched as wheels:\n"
                f"{(got.stderr + got.stdout)[-1500:]}")
    before = await asyncio.to_thread(_wheel_names, dest)
    res = await build(work / "sdist" / sdist.filename, wheels, dest)
    asked: set[str] = set()
    for _ in range(MAX_SETUP_REQUIRES):  # what only its setup code names (`setup_requires`), fetched as wheels
        needed = NO_WHEEL.search(res.stdout + res.stderr)
        if res.ok or needed is None or needed[1] in asked:
            break
        asked.add(needed[1])
        got = await run_host(wheel_argv([needed[1]], wheels), cwd=wheels, timeout=timeout)
        if not got.ok:
            break
        res = await build(work / "sdist" / sdist.filename, wheels, dest)
    if not res.ok:
        why = "ran longer than its timeout and was stopped" if res.timed_out else f"failed (exit code {res.exit_code})"
        return (f"building {sdist.filename} from source in the sandbox (no network) {why}; not installed:\n"
                f"{(res.stdout + res.stderr)[-1500:]}")
    made = sorted(await asyncio.to_thread(_wheel_names, dest) - before)
    return made or f"building {sdist.filename} in the sandbox gave no wheel; not installed."


def _wheel_names(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.whl")}


def _failed(text: str, start: float, timed_out: bool = False) -> InstallResult:
    return InstallResult(1, "", text, time.monotonic() - start, timed_out=timed_out)


def installed_files(folder: Path, built: dict[str, IndexFile] | None = None) -> tuple[InstalledFile, ...]:
    """A record per wheel in `folder`: name, version, sha256 (the sdist's for a built one), modules."""
    built = built or {}
    records = []
    for wheel in sorted(folder.glob("*.whl")):
        try:
            name, version, _, _ = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename:
            continue
        source = built.get(wheel.name)
        sha = source.sha256 if source else hashlib.sha256(wheel.read_bytes()).hexdigest()
        records.append(InstalledFile(str(name), str(version), source.filename if source else wheel.name, sha,
                                     "sandbox" if source else "index", wheel_modules(wheel)))
    return tuple(records)


def installed_from_report(text: str, site: Path | None = None) -> tuple[InstalledFile, ...]:
    """The records of a `pip install --report` (the local backend: wheels from the index, never built);
    the modules from the installed dist-info in `site`."""
    try:
        rows = json.loads(text).get("install", [])
    except (ValueError, AttributeError):
        return ()
    records = []
    for row in rows:
        meta, info = row.get("metadata", {}), row.get("download_info", {})
        url = str(info.get("url", ""))
        sha = str(info.get("archive_info", {}).get("hashes", {}).get("sha256", ""))
        name, version = str(meta.get("name", "")), str(meta.get("version", ""))
        modules = _site_modules(site, name, version) if site is not None else ()
        records.append(InstalledFile(name, version, url.rsplit("/", 1)[-1], sha, "index", modules))
    return tuple(records)


def _site_modules(site: Path, name: str, version: str) -> tuple[str, ...]:
    """The top-level modules an installed distribution's dist-info names (top_level.txt, else RECORD)."""
    folder = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    if (folder / "top_level.txt").is_file():
        found = (folder / "top_level.txt").read_text(errors="replace").split()
    elif (folder / "RECORD").is_file():
        found = [PurePosixPath(row.split(",")[0]).parts[0].removesuffix(".py")
                 for row in (folder / "RECORD").read_text(errors="replace").splitlines() if row.strip()]
    else:
        return ()
    skip = (".dist-info", ".data", "__pycache__", "..")
    return tuple(sorted({m for m in found if m and not m.endswith(skip) and not m.endswith(".pth")}))


def wheel_modules(wheel: Path) -> tuple[str, ...]:
    """The top-level import names a wheel provides: its top_level.txt, else the first parts of its RECORD."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        top = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        if top:
            found = zf.read(top[0]).decode(errors="replace").split()
        else:
            found = [PurePosixPath(n).parts[0].removesuffix(".py") for n in names]
    skip = (".dist-info", ".data", "__pycache__")
    return tuple(sorted({m for m in found if m and not m.endswith(skip) and not m.endswith(".pth")}))
