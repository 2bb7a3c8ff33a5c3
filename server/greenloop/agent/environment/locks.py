"""A project's lock file read as pins for the sandbox: uv.lock, poetry.lock, pdm.lock (TOML), Pipfile.lock (JSON).

Only what applies here is kept: a package whose markers are false for the sandbox's Python and
platform is left out, the project itself (uv's editable or virtual source) and packages not from an
index (git, a path, a URL) too. A lock that does not parse, or was made for another Python, gives no
pins and a reason, so the environment step falls back to the next source (sources.py).
"""

from __future__ import annotations

import json
import platform
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from greenloop.agent.changes.declared_pyproject import poetry_constraint

LOCK_FILES = ("uv.lock", "poetry.lock", "Pipfile.lock", "pdm.lock")  # in the order they are tried
MAX_PINS = 400  # more is no project's test environment; the lock is not used


@dataclass(frozen=True)
class Pins:
    """The `name==version` specs a source gives for this sandbox, or why it gives none (`reason`)."""

    source: str
    specs: tuple[str, ...] = ()
    reason: str = ""


def marker_environment(python: str) -> dict[str, str]:
    """The sandbox's marker values (a Linux container of `python`, on this machine's architecture)."""
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "os_name": "posix", "platform_machine": platform.machine(),
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def read_lock(name: str, text: str, python: str) -> Pins:
    """The pins of lock file `name` for a sandbox of `python`; a reason instead when it cannot be used."""
    env = marker_environment(python)
    try:
        pins = _READERS[name](text, env)
    except (tomllib.TOMLDecodeError, ValueError, TypeError, AttributeError, KeyError) as exc:
        return Pins(name, reason=f"{name} does not parse ({type(exc).__name__}: {str(exc)[:160]})")
    if isinstance(pins, str):
        return Pins(name, reason=pins)
    if not pins:
        return Pins(name, reason=f"{name} locks no package from an index for Python {python}")
    if len(pins) > MAX_PINS:
        return Pins(name, reason=f"{name} locks {len(pins)} packages, more than {MAX_PINS}")
    return Pins(name, tuple(sorted(set(pins))))


def _uv(text: str, env: dict[str, str]) -> list[str] | str:
    data = tomllib.loads(text)
    if not _python_allowed(data.get("requires-python", ""), env):
        return f"uv.lock is for Python {data.get('requires-python')}, not the sandbox's {env['python_version']}"
    pins = []
    for package in data.get("package", []):
        source = package.get("source", {})
        if "registry" not in source or "version" not in package:
            continue  # the project itself (editable, virtual), or not from an index (git, path, url)
        markers = package.get("resolution-markers")
        if markers and not any(_true(m, env) for m in markers):
            continue
        pins.append(f"{package['name']}=={package['version']}")
    return pins


def _poetry(text: str, env: dict[str, str]) -> list[str] | str:
    data = tomllib.loads(text)
    pins = []
    for package in data.get("package", []):
        if package.get("source", {}).get("type") in ("git", "directory", "file", "url"):
            continue
        if not _python_allowed(str(package.get("python-versions", "")), env):
            continue
        if (marker := package.get("markers")) and isinstance(marker, str) and not _true(marker, env):
            continue
        pins.append(f"{package['name']}=={package['version']}")
    return pins


def _pdm(text: str, env: dict[str, str]) -> list[str] | str:
    data = tomllib.loads(text)
    pins = []
    for package in data.get("package", []):
        if any(key in package for key in ("editable", "path", "git", "url")) or "version" not in package:
            continue
        if not _python_allowed(str(package.get("requires_python", "")), env):
            continue
        if (marker := package.get("marker")) and not _true(str(marker), env):
            continue
        pins.append(f"{package['name']}=={package['version']}")
    return pins


def _pipfile(text: str, env: dict[str, str]) -> list[str] | str:
    data = json.loads(text)
    wanted = str(data.get("_meta", {}).get("requires", {}).get("python_version", ""))
    if wanted and wanted.split(".")[:2] != env["python_version"].split(".")[:2] and wanted.startswith("2"):
        return f"Pipfile.lock is for Python {wanted}, not the sandbox's {env['python_version']}"
    pins = []
    for group in ("default", "develop"):
        entries: Mapping[str, Any] = data.get(group) or {}
        for name, entry in entries.items():
            version = entry.get("version", "") if isinstance(entry, dict) else ""
            if not version.startswith("=="):
                continue  # git, a path, editable
            if (marker := entry.get("markers")) and not _true(str(marker), env):
                continue
            pins.append(f"{name}{version}")
    return pins


def _true(marker: str, env: dict[str, str]) -> bool:
    try:
        return Marker(marker).evaluate(env)
    except InvalidMarker:
        return True  # a marker this library cannot read: kept, pip reads it again at install


def _python_allowed(spec: str, env: dict[str, str]) -> bool:
    """Whether a requires-python (PEP 440, or poetry's `^3.8 || ^3.9` style) allows the sandbox's Python."""
    spec = spec.strip()
    if not spec or spec == "*":
        return True
    python = Version(env["python_full_version"])
    # an unreadable part reads as any version: pip decides
    return any(SpecifierSet(poetry_constraint(part.strip())).contains(python, prereleases=True)
               for part in spec.split("||"))


_READERS: dict[str, Callable[[str, dict[str, str]], list[str] | str]] = {
    "uv.lock": _uv, "poetry.lock": _poetry, "Pipfile.lock": _pipfile, "pdm.lock": _pdm}
