"""Builds `llama-server` once from llama-cpp-python's source release (its vendored llama.cpp), cached by version.

`pip download --no-binary :all:` fetches the sdist from the package index pip
already uses, `vendor/llama.cpp` is unpacked, and cmake builds only the
`llama-server` target (about 7 minutes on 2 cores). Every step is bounded by
`local_model.build_timeout`; a failure leaves its log in `build-failed.log`
and raises an error that shows the log's tail (the caller falls back to
llama-cpp-python's server).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from greenloop.errors import GreenloopError
from greenloop.llm.local_binary import (
    LLAMA_CPP_PYTHON_VERSION,
    build_dir,
    build_failure_log,
    built_server,
    origin_file,
    unusable,
)
from greenloop.settings import LocalModelSettings

# (step, percent done): step is "download", "configure" or "compile".
BuildProgress = Callable[[str, int], None]

CMAKE_FLAGS = (
    "-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_SERVER=ON",
    "-DBUILD_SHARED_LIBS=OFF", "-DCMAKE_BUILD_TYPE=Release",
)
_PERCENT = re.compile(rb"^\[\s*(\d+)%\]")


class BuildFailed(GreenloopError):
    """The llama-server build did not finish; the message ends with its log's tail."""


def build_llama_server(settings: LocalModelSettings, progress: BuildProgress | None = None) -> Path:
    """The built llama-server, building it first when it is not cached. Blocking."""
    target = built_server()
    if unusable(target) is None:
        return target
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        raise BuildFailed(
            f"Building llama-server needs {' and '.join(missing)} (Debian: apt-get install cmake build-essential)."
        )
    deadline = time.monotonic() + settings.build_timeout
    build_dir().mkdir(parents=True, exist_ok=True)
    log_path = build_dir() / "build.log"
    with tempfile.TemporaryDirectory(prefix="greenloop-llama-build-", dir=build_dir()) as tmp, \
            log_path.open("wb") as log:
        try:
            source = _fetch_source(Path(tmp), log, deadline, progress)
            binary = _compile(source, Path(tmp) / "build", log, deadline, progress)
            _check_runs(binary, log)
        except BuildFailed:
            log.close()
            shutil.copyfile(log_path, build_failure_log())
            raise
        return _install(binary, f"built from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}'s source")


def install_prebuilt(binary: Path) -> Path:
    """Copy a llama-server built from the same source release into the cache (skips the build)."""
    problem = unusable(binary)
    if problem:
        raise GreenloopError(f"{binary} {problem}.")
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GreenloopError(f"{binary} does not run here ({exc}).") from exc
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).decode(errors="replace").strip()[-500:]
        raise GreenloopError(f"{binary} --version exited with {result.returncode}: {tail}")
    build_dir().mkdir(parents=True, exist_ok=True)
    return _install(binary, f"copied from {binary.resolve()}")


def _install(binary: Path, origin: str) -> Path:
    """Put `binary` in the cache as the llama-server (atomically) and say where it came from."""
    target = built_server()
    staged = target.with_name(target.name + ".new")
    shutil.copy2(binary, staged)
    staged.chmod(0o755)
    staged.replace(target)
    origin_file().write_text(origin + "\n", encoding="utf-8")
    build_failure_log().unlink(missing_ok=True)
    return target


def _fetch_source(tmp: Path, log: IO[bytes], deadline: float, progress: BuildProgress | None) -> Path:
    """`vendor/llama.cpp` of the llama-cpp-python sdist, unpacked under `tmp`."""
    if progress:
        progress("download", 0)
    sdist = download_sdist(tmp / "sdist", log, deadline)
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if "/vendor/llama.cpp/" in f"{m.name}/"]
        if not members:
            raise BuildFailed(f"{sdist.name} holds no vendor/llama.cpp; the release layout changed.")
        if any(m.name.startswith("/") or ".." in Path(m.name).parts for m in members):
            raise BuildFailed(f"{sdist.name} has members outside its folder; not unpacked.")
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
            tar.extractall(tmp / "src", members=members, filter="data")
        else:
            tar.extractall(tmp / "src", members=members)
    (root,) = (tmp / "src").iterdir()
    if progress:
        progress("download", 100)
    return root / "vendor" / "llama.cpp"


def download_sdist(dest: Path, log: IO[bytes], deadline: float) -> Path:
    """The llama-cpp-python source release, by pip (its index settings apply)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
           "--disable-pip-version-check", "--progress-bar", "off", "-d", str(dest),
           f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"]
    _run("download the source", cmd, dest.parent, log, deadline)
    found = sorted(dest.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"))
    if not found:
        raise BuildFailed(_with_tail(log, "pip saved no llama-cpp-python source archive"))
    return found[0]


def _compile(source: Path, build: Path, log: IO[bytes], deadline: float, progress: BuildProgress | None) -> Path:
    if progress:
        progress("configure", 0)
    _run("configure", ["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS], source, log, deadline)
    jobs = str(max(1, os.cpu_count() or 1))
    on_line = (lambda pct: progress("compile", pct)) if progress else None
    _run("compile", ["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs],
         source, log, deadline, on_line)
    binary = build / "bin" / "llama-server"
    if unusable(binary):
        raise BuildFailed(_with_tail(log, f"the build finished without {binary}"))
    return binary


def _check_runs(binary: Path, log: IO[bytes]) -> None:
    """A binary that cannot start here (a missing library, an unsupported CPU) is a failed build."""
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(_with_tail(log, f"the built llama-server does not run ({exc})")) from exc
    log.write(result.stdout + result.stderr)
    log.flush()
    if result.returncode != 0:
        raise BuildFailed(_with_tail(log, f"the built llama-server --version exited with {result.returncode}"))


def _run(step: str, cmd: list[str], cwd: Path, log: IO[bytes], deadline: float,
         on_percent: Callable[[int], None] | None = None) -> None:
    """`cmd` with its output in `log`; its whole process group is killed at the deadline."""
    log.write(f"$ {' '.join(cmd)}\n".encode())
    log.flush()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), _kill_group, (proc.pid,))
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            if on_percent and (match := _PERCENT.match(line)):
                on_percent(int(match.group(1)))
        proc.wait()
    except BaseException:
        _kill_group(proc.pid)
        raise
    finally:
        timer.cancel()
        log.flush()
    if time.monotonic() >= deadline:
        raise BuildFailed(_with_tail(log, f"{step} took longer than local_model.build_timeout"))
    if proc.returncode != 0:
        raise BuildFailed(_with_tail(log, f"{step} failed (exit code {proc.returncode})"))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _with_tail(log: IO[bytes], what: str, lines: int = 20) -> str:
    log.flush()
    try:
        text = Path(log.name).read_text(errors="replace")
    except (OSError, TypeError):
        text = ""
    tail = "\n".join(text.splitlines()[-lines:])
    return (f"Building llama-server from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}: {what}. "
            f"The embedded model uses llama-cpp-python's slower server instead. Full log: "
            f"{build_failure_log()}. It ends with:\n{tail}")
