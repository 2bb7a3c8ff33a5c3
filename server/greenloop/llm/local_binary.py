"""Which embedded model server runs: llama.cpp's `llama-server` when one is found, else llama-cpp-python's.

Search order: `local_model.server_path`, `llama-server` on PATH, then the one
`greenloop model fetch` built (cached per llama-cpp-python version in the user
cache dir). This module only looks; `local_build` builds.
"""

from __future__ import annotations

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

ServerKind = Literal["llama-server", "llama-cpp-python"]


@dataclass(frozen=True)
class ServerChoice:
    """The server to start, and why (`greenloop doctor` prints `reason`)."""

    kind: ServerKind
    path: Path | None  # the llama-server executable; None for llama-cpp-python
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
    if unusable(built_server()) is None:
        try:
            origin = origin_file().read_text(encoding="utf-8").strip()
        except OSError:
            origin = f"built from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}"
        return built_server(), f"cached ({origin})"
    return None


def llama_cpp_python_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def choose_server(settings: LocalModelSettings) -> ServerChoice:
    """llama-server when one is found (unless `local_model.server` says otherwise), else the fallback."""
    if settings.server == "llama-cpp-python":
        return ServerChoice("llama-cpp-python", None, "local_model.server = 'llama-cpp-python'")
    found = find_llama_server(settings)
    if found is not None:
        return ServerChoice("llama-server", found[0], f"{found[1]}: {found[0]}")
    if settings.server == "llama-server":
        raise GreenloopError(
            "local_model.server is 'llama-server' but none was found (local_model.server_path, PATH, "
            f"{built_server()}). Run `greenloop model fetch` to build it, or set local_model.server_path."
        )
    why = "no llama-server on PATH and none built yet (`greenloop model fetch` builds it)"
    if build_failure_log().is_file():
        why = f"the llama-server build failed (log: {build_failure_log()}); `greenloop model fetch` retries it"
    return ServerChoice("llama-cpp-python", None, f"fallback: {why}")
