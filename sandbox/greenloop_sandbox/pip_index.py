"""Source distributions fetched from a PEP 503 index as files: no metadata prepared, no package code run.

`pip download` of an sdist builds its metadata (runs its `setup.py`) on the host, so an sdist is
fetched here instead: the index's page for the name is read, the newest file the spec allows is
downloaded, and its sha256 must be the one the page lists (a file without one, or with another, is
refused). `build_requires` reads the sdist's `[build-system] requires` from its pyproject.toml
without unpacking anything else. Building happens in a container (sdist_build.py). `releases` says which
releases of a name have a wheel the sandbox's Python installs (PEP 691 JSON, the tags of `packaging.tags`).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import io
import os
import re
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import httpx
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from greenloop_sandbox.values import SandboxError

PYPI = "https://pypi.org/simple"
MAX_SDIST = 200 << 20  # bytes; a larger download is refused
DEFAULT_BUILD_REQUIRES = ("setuptools>=40.8.0", "wheel")  # PEP 517's fallback for a setup.py-only sdist


@dataclass(frozen=True)
class IndexFile:
    """One sdist an index lists: its file name, version, URL and the sha256 the page gives for it."""

    filename: str
    version: Version
    url: str
    sha256: str


def index_urls() -> list[str]:
    """The http(s) indexes pip on this host uses (`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, pip's config), main first."""
    main = os.environ.get("PIP_INDEX_URL", "")
    extra = os.environ.get("PIP_EXTRA_INDEX_URL", "").split()
    if not main or not extra:
        config = _pip_config()
        main = main or config.get("index-url", "")
        extra = extra or config.get("extra-index-url", "").split()
    return [u.rstrip("/") for u in [main or PYPI, *extra] if u.startswith(("http://", "https://"))]


def _pip_config() -> dict[str, str]:
    import subprocess

    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        found.setdefault(key.rsplit(".", 1)[-1], value.strip().strip("'\""))
    return found


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append((str(found["href"]), found))


def listed_sdists(page: str, page_url: str, name: str) -> list[IndexFile]:
    """The sdists of `name` on a PEP 503 page (yanked ones left out), each with the sha256 it lists ("" if none)."""
    parser = _Links()
    parser.feed(page)
    files = []
    for href, attrs in parser.links:
        if "data-yanked" in attrs:
            continue
        url, fragment = urldefrag(urljoin(page_url, href))
        filename = url.rsplit("/", 1)[-1]
        try:
            found, version = parse_sdist_filename(filename)
        except InvalidSdistFilename:
            continue
        if found != canonicalize_name(name):
            continue
        sha = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else ""
        files.append(IndexFile(filename, version, url, sha.lower()))
    return files


async def fetch_sdist(spec: str, dest: Path, indexes: list[str] | None = None,
                      timeout: float = 120) -> IndexFile:  # noqa: ASYNC109 (the HTTP client's timeout)
    """Download the newest sdist `spec` allows into `dest` and check its hash; SandboxError says why not."""
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise SandboxError(f"{spec!r} is not a requirement: {exc}") from None
    urls = indexes if indexes is not None else await asyncio.to_thread(index_urls)
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        for index in urls:
            page_url = f"{index}/{canonicalize_name(req.name)}/"
            try:
                page = await client.get(page_url, headers={"Accept": "text/html"})
            except httpx.HTTPError:
                continue
            if page.status_code != 200:
                continue
            listed = listed_sdists(page.text, str(page.url), req.name)
            allowed = ([f for f in listed if req.specifier.contains(f.version)]
                       or [f for f in listed if req.specifier.contains(f.version, prereleases=True)])
            if allowed:
                return await _download(client, max(allowed, key=lambda f: f.version), dest)
    raise SandboxError(f"no source distribution of {spec!r} on the package index either "
                       f"({', '.join(urls) or 'no http index configured'}): check the name and the version.")


async def _download(client: httpx.AsyncClient, file: IndexFile, dest: Path) -> IndexFile:
    if not re.fullmatch(r"[0-9a-f]{64}", file.sha256):
        raise SandboxError(f"the index lists {file.filename} without a sha256 hash, so what it serves cannot be "
                           "checked; not installed.")
    digest, data = hashlib.sha256(), io.BytesIO()
    async with client.stream("GET", file.url) as resp:
        if resp.status_code != 200:
            raise SandboxError(f"downloading {file.filename} failed: HTTP {resp.status_code}")
        async for chunk in resp.aiter_bytes():
            digest.update(chunk)
            data.write(chunk)
            if data.tell() > MAX_SDIST:
                raise SandboxError(f"{file.filename} is larger than {MAX_SDIST >> 20} MB; not installed.")
    if digest.hexdigest() != file.sha256:
        raise SandboxError(f"the index served a different {file.filename} than the one it lists (sha256 "
                           f"{digest.hexdigest()[:16]}..., listed {file.sha256[:16]}...); refused, nothing installed.")
    await asyncio.to_thread(_write, dest / file.filename, data.getvalue())
    return file


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def build_requires(sdist: Path) -> list[str]:
    """What building `sdist` needs (its pyproject.toml's `[build-system] requires`, else setuptools and wheel),
    read from the archive without unpacking it; "wheel" always, which older setuptools asks for."""
    text = _pyproject_text(sdist)
    requires: list[str] = list(DEFAULT_BUILD_REQUIRES)
    if text is not None:
        try:
            found = tomllib.loads(text).get("build-system", {}).get("requires")
        except tomllib.TOMLDecodeError:
            found = None
        if isinstance(found, list):
            requires = [str(r) for r in found if isinstance(r, str)] + ["wheel"]
    return sorted(set(requires))


def _pyproject_text(sdist: Path) -> str | None:
    top_level = re.compile(r"^[^/]+/pyproject\.toml$")
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            names = [n for n in zf.namelist() if top_level.match(n)]
            return zf.read(names[0])[:1 << 20].decode(errors="replace") if names else None
    with tarfile.open(sdist) as tar:
        for member in tar:
            if member.isfile() and top_level.match(member.name):
                fh = tar.extractfile(member)
                return fh.read(1 << 20).decode(errors="replace") if fh else None
    return None


async def wheel_versions(name: str, python: str, indexes: list[str] | None = None,
                         timeout: float = 60) -> list[Version]:  # noqa: ASYNC109 (the HTTP client's timeout)
    """The releases of `name` with a pure-python (`py3`/`py2.py3`) wheel whose Requires-Python allows `python`,
    not yanked, not pre-releases, newest first; [] when the index cannot be read (a reason for the caller)."""
    found: set[Version] = set()
    for file in await _json_files(name, indexes, timeout):
        wheel = _wheel(file, python)
        if wheel is not None and wheel[1] and wheel[2] and not wheel[0].is_prerelease:
            found.add(wheel[0])
    return sorted(found, reverse=True)


# the first release candidate of each CPython (its ABI final from then on): a wheel for that Python's own ABI
# uploaded before it was built against an alpha or beta and may crash on the release (PEP 700 `upload-time`)
ABI_FROZEN = {"3.8": "2019-10-01", "3.9": "2020-08-11", "3.10": "2021-08-03", "3.11": "2022-08-08",
              "3.12": "2023-08-06", "3.13": "2024-08-01", "3.14": "2025-07-22"}


@dataclass(frozen=True)
class Releases:
    """What the index lists of one name for the sandbox: its releases (not yanked, not pre-releases), those
    with a wheel the sandbox's Python installs, and whether some wheel is built for a platform (a compiled
    package: building its sdist needs a compiler, which the sandbox has not)."""

    versions: tuple[Version, ...] = ()  # newest first
    wheels: frozenset[Version] = frozenset()
    compiled: bool = False


async def releases(name: str, python: str, indexes: list[str] | None = None,
                   timeout: float = 60) -> Releases | None:  # noqa: ASYNC109 (the HTTP client's timeout)
    """`Releases` of `name` for a Linux sandbox of `python` on this machine's architecture (the tags
    `pip download --python-version` takes here); None when no index lists the name."""
    files = await _json_files(name, indexes, timeout)
    if not files:
        return None
    versions: set[Version] = set()
    wheels: set[Version] = set()
    compiled = False
    for file in files:
        if file.get("yanked"):
            continue
        wheel = _wheel(file, python)
        version = wheel[0] if wheel is not None else _sdist_version(str(file.get("filename", "")))
        if version is None or version.is_prerelease:
            continue
        versions.add(version)
        if wheel is not None:
            compiled = compiled or not wheel[2]
            if wheel[1]:
                wheels.add(version)
    return Releases(tuple(sorted(versions, reverse=True)), frozenset(wheels), compiled)


@functools.cache
def sandbox_tags(python: str) -> frozenset[Tag]:
    """The wheel tags a CPython `python` installs on this machine's platform (what pip's `--python-version` takes)."""
    version = tuple(int(p) for p in python.split(".")[:2])
    platforms = list(platform_tags())
    return frozenset([*cpython_tags(version, platforms=platforms),
                      *compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)])


def _wheel(file: dict[str, Any], python: str) -> tuple[Version, bool, bool] | None:
    """(version, installs in the sandbox, pure python) of a listed wheel whose Requires-Python allows `python`;
    None for an sdist, another file, or a wheel for another Python."""
    try:
        _, version, _, tags = parse_wheel_filename(str(file.get("filename", "")))
        if not SpecifierSet(file.get("requires-python") or "").contains(python):
            return None
    except (InvalidWheelFilename, InvalidSpecifier, InvalidVersion):
        return None
    pure = any(t.platform == "any" and t.abi == "none" and t.interpreter.startswith("py") for t in tags)
    fits = tags & sandbox_tags(python)
    own_abi = f"cp{python.replace('.', '')}"  # a wheel for this Python's own ABI, not abi3 or pure
    frozen = ABI_FROZEN.get(python, "")
    if fits and all(t.abi == own_abi for t in fits) and str(file.get("upload-time") or "9")[:10] < frozen:
        fits = frozenset()  # built against an alpha or beta of this Python: its ABI was not final (coverage 6.1.2)
    return version, bool(fits), pure


def _sdist_version(filename: str) -> Version | None:
    try:
        return parse_sdist_filename(filename)[1]
    except (InvalidSdistFilename, InvalidVersion):
        return None


async def _json_files(name: str, indexes: list[str] | None, timeout: float) -> list[dict[str, Any]]:  # noqa: ASYNC109
    """The files every index lists for `name` (PEP 691 JSON); [] when none can be read."""
    urls = indexes if indexes is not None else await asyncio.to_thread(index_urls)
    found: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        for index in urls:
            try:
                page = await client.get(f"{index}/{canonicalize_name(name)}/",
                                        headers={"Accept": "application/vnd.pypi.simple.v1+json"})
                files = page.json().get("files", []) if page.status_code == 200 else []
            except (httpx.HTTPError, ValueError):
                continue
            found += [f for f in files if isinstance(f, dict)]
    return found
