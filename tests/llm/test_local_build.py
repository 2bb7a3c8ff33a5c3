"""Building llama-server: real cmake and a real compiler on a stand-in source release, success and failure.

The source archive is a tiny cmake project laid out like llama-cpp-python's
sdist (`vendor/llama.cpp`) with a `llama-server` target, so the build runs in
seconds; pip's download is the only thing swapped (no network in tests).
"""

from __future__ import annotations

import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import local_binary, local_build
from greenloop.llm.local_binary import (
    LLAMA_CPP_PYTHON_VERSION,
    build_failure_log,
    built_server,
    choose_server,
)
from greenloop.llm.local_build import BuildFailed, build_llama_server, install_prebuilt
from greenloop.settings import LocalModelSettings

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("c++") is None,
                                reason="needs cmake and a C++ compiler (.ci/setup installs them)")

CMAKE_OK = """cmake_minimum_required(VERSION 3.14)
project(fake_llama CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server server.cpp)
add_executable(never-built never.cpp)
"""
SERVER_CPP = '#include <cstdio>\nint main() { std::puts("version: fake"); return 0; }\n'
CMAKE_BROKEN = "cmake_minimum_required(VERSION 3.14)\nproject(fake_llama CXX)\nmessage(FATAL_ERROR \"boom: no ggml\")\n"


def make_sdist(dest: Path, cmake: str) -> Path:
    root = dest / "src" / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"
    llama = root / "vendor" / "llama.cpp"
    llama.mkdir(parents=True)
    (llama / "CMakeLists.txt").write_text(cmake)
    (llama / "server.cpp").write_text(SERVER_CPP)
    (llama / "never.cpp").write_text("this is not C++ and must not be compiled\n")
    (root / "setup.py").write_text("")
    archive = dest / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=root.name)
    return archive


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty user cache, on a machine where xllamacpp has no wheel (the build is the fallback there)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    monkeypatch.setattr(local_binary, "xllamacpp_version", lambda: None)
    yield tmp_path / "cache"


def serve_sdist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cmake: str) -> list[int]:
    archive = make_sdist(tmp_path / "index", cmake)
    calls: list[int] = []

    def download(dest: Path, log: IO[bytes], deadline: float) -> Path:
        calls.append(1)
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(archive, dest))

    monkeypatch.setattr(local_build, "download_sdist", download)
    return calls


def test_builds_only_the_server_target_once_and_the_choice_finds_it(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = serve_sdist(monkeypatch, tmp_path, CMAKE_OK)
    steps: list[tuple[str, int]] = []
    path = build_llama_server(LocalModelSettings(), lambda step, pct: steps.append((step, pct)))
    assert path == built_server() and path.stat().st_mode & 0o111
    assert ("compile", 100) in steps and steps[0] == ("download", 0)
    choice = choose_server(LocalModelSettings())
    assert choice.kind == "llama-server" and "built from llama-cpp-python" in choice.reason
    assert build_llama_server(LocalModelSettings()) == path and calls == [1]  # cached by version
    assert [p.name for p in built_server().parent.iterdir() if p.name.startswith("greenloop-")] == []


def test_a_failed_build_shows_the_log_tail_keeps_the_log_and_the_choice_falls_back(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_sdist(monkeypatch, tmp_path, CMAKE_BROKEN)
    with pytest.raises(BuildFailed, match=r"configure failed(.|\n)*boom: no ggml"):
        build_llama_server(LocalModelSettings())
    assert "boom: no ggml" in build_failure_log().read_text()
    choice = choose_server(LocalModelSettings())
    assert choice.kind == "llama-cpp-python" and "build failed" in choice.reason
    assert not built_server().exists()


def test_a_build_past_its_timeout_is_killed(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = CMAKE_OK + 'execute_process(COMMAND sleep 30)\n'
    serve_sdist(monkeypatch, tmp_path, slow)
    with pytest.raises(BuildFailed, match=r"took longer than local_model\.build_timeout"):
        build_llama_server(LocalModelSettings(build_timeout=3))


def test_a_prebuilt_server_is_copied_only_when_it_runs(tmp_path: Path, cache: Path) -> None:
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libgomp.so.1'; exit 127\n")
    broken.chmod(0o755)
    with pytest.raises(GreenloopError, match="libgomp"):
        install_prebuilt(broken)
    good = tmp_path / "good"
    good.write_text("#!/bin/sh\necho 'version: 1 (abc)'\n")
    good.chmod(0o755)
    assert install_prebuilt(good) == built_server()
    assert f"copied from {good}" in choose_server(LocalModelSettings()).reason
