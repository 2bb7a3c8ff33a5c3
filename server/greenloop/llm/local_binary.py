"""Which embedded model server runs: llama.cpp's server, prebuilt (xllamacpp) or an executable; else llama-cpp-python's.

Search order: `local_model.server_path`, `llama-server` on PATH, xllamacpp (the
`[local]` extra: llama.cpp's server in a prebuilt wheel, nothing to compile), then
the llama-server `greenloop model fetch` built when xllamacpp was not there (cached
per llama-cpp-python version in the user cache dir). This module only looks;
`local_build` builds.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from greenloop.errors import GreenloopError
from greenloop.settings import LocalModelSettings

# The llama-cpp-python source release whose vendored llama.cpp `llama-server` is built from
# (the same llama.cpp the installed llama-cpp-python wheel carries).
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
# The xllamacpp release the `[local]` extra pins, measured against the source build
# (docs/decisions/2026-11-prebuilt-model-server.md).
XLLAMACPP_VERSION = "2026.10.11549"

ServerKind = Literal["llama-server", "xllamacpp", "llama-cpp-python"]


@dataclass(frozen=True)
class ServerChoice:
    """The server to start, and why (`greenloop doctor` prints `reason`)."""

    kind: ServerKind
    path: Path | None  # the llama-server executable; None for xllamacpp and llama-cpp-python
    reason: str


def build_dir() -> Path:
    """Where `greenloop model fetch` builds and keeps llama-server, per source version."""
    return Path(platformdirs.user_cache_dir("greenloop")) / "llama-server" / LLAMA_CPP_PYTHON_VERSION


def built_server() -> Path:
    return build_dir() / "llama-server"


def origin_file() -> Path:
    """One line next to the cached binary: built here, or copied from where."""
    return build_dir() / "origin.txt"


def build_failure_log() -> Path:
    """Written when a build fails (its output); removed when one succeeds."""
    return build_dir() / "build-failed.log"


def unusable(path: Path) -> str | None:
    """Why `path` cannot be run as llama-server, or None when it can."""
    if not path.exists():
        return "does not exist"
    if not path.is_file():
        return "is not a file"
    if not os.access(path, os.X_OK):
        return "is not executable (chmod +x it)"
    return None


def find_llama_server(settings: LocalModelSettings) -> tuple[Path, str] | None:
    """The llama-server to run and where it was found, or None. A bad `server_path` is an error."""
    found = _named_or_on_path(settings)
    return found if found is not None else _cached_build()


def _named_or_on_path(settings: LocalModelSettings) -> tuple[Path, str] | None:
    if settings.server_path:
        path = Path(settings.server_path).expanduser()
        problem = unusable(path)
        if problem:
            raise GreenloopError(
                f"local_model.server_path {path} {problem}. Point it at a llama-server executable, "
                "or unset it to use the one on PATH or the one `greenloop model fetch` builds."
            )
        return path, "local_model.server_path"
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path), "found on PATH"
    return None


def _cached_build() -> tuple[Path, str] | None:
    if unusable(built_server()) is None:
        try:
            origin = origin_file().read_text(encoding="utf-8").strip()
        except OSError:
            origin = f"built from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}"
        return built_server(), f"cached ({origin})"
    return None


def llama_cpp_python_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def xllamacpp_version() -> str | None:
    """The installed xllamacpp's version (from its metadata: nothing is loaded), or None."""
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return None


def _xllamacpp_choice(why: str) -> ServerChoice | None:
    version = xllamacpp_version()
    if version is None:
        return None
    pin = "" if version == XLLAMACPP_VERSION else f"; greenloop was measured with {XLLAMACPP_VERSION}"
    return ServerChoice("xllamacpp", None, f"{why}: xllamacpp {version}, llama.cpp's server prebuilt{pin}")


def choose_server(settings: LocalModelSettings) -> ServerChoice:
    """The first server of the search order that is there (`local_model.server` narrows it), else the fallback."""
    if settings.server == "llama-cpp-python":
        return ServerChoice("llama-cpp-python", None, "local_model.server = 'llama-cpp-python'")
    if settings.server == "xllamacpp":
        chosen = _xllamacpp_choice("local_model.server = 'xllamacpp'")
        if chosen is None:
            raise GreenloopError("local_model.server is 'xllamacpp' but it is not installed: "
                                 "pip install 'greenloop[local]', or set local_model.server to 'auto'.")
        return chosen
    found = _named_or_on_path(settings)
    if found is None and settings.server == "auto" and not settings.server_args:
        prebuilt = _xllamacpp_choice("installed")
        if prebuilt is not None:
            return prebuilt
    found = found or _cached_build()
    if found is not None:
        return ServerChoice("llama-server", found[0], f"{found[1]}: {found[0]}")
    if settings.server == "llama-server":
        raise GreenloopError(
            "local_model.server is 'llama-server' but none was found (local_model.server_path, PATH, "
            f"{built_server()}). Run `greenloop model fetch` to build it, or set local_model.server_path."
        )
    return ServerChoice("llama-cpp-python", None, f"fallback: {_no_llama_cpp_server(settings)}")


def _no_llama_cpp_server(settings: LocalModelSettings) -> str:
    if build_failure_log().is_file():
        return f"the llama-server build failed (log: {build_failure_log()}); `greenloop model fetch` retries it"
    if settings.server_args and xllamacpp_version() is not None:
        return ("local_model.server_args are llama-server flags, which xllamacpp does not take, and no "
                "llama-server on PATH or built yet (`greenloop model fetch --build-server` builds it)")
    return ("xllamacpp is not installed (pip install 'greenloop[local]'), no llama-server on PATH and none "
            "built yet (`greenloop model fetch` builds it)")


def fallback_after(failed: ServerChoice, settings: LocalModelSettings, why: str) -> ServerChoice | None:
    """What `auto` starts when `failed` would not start: a llama-server (after xllamacpp), then llama-cpp-python."""
    if settings.server != "auto" or settings.server_path:
        return None
    if failed.kind == "xllamacpp":
        found = _cached_build()
        if found is not None:
            return ServerChoice("llama-server", found[0], f"fallback: xllamacpp did not start ({why}); "
                                f"{found[1]}: {found[0]}")
    if failed.kind != "llama-cpp-python" and llama_cpp_python_installed():
        return ServerChoice("llama-cpp-python", None, f"fallback: {failed.kind} did not start ({why})")
    return None
