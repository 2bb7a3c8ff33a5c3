"""No package code runs on the host: sdists from a local index are built in a container or refused, never here.

The index (tests/support/package_index.py) serves sdists whose setup.py writes a marker file; the marker
on the host after an install means the package's code ran on the host.
"""

from __future__ import annotations

import io
import json
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from greenloop_sandbox import DockerSandbox, Limits, LocalSandbox, SandboxError, load_template
from greenloop_sandbox.base import InstallResult
from greenloop_sandbox.packages import check_pip_specs, resolve_argv, run_host
from greenloop_sandbox.pip_index import build_requires, fetch_sdist
from tests.support.package_index import PackageIndex, extra_index, unique_name


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    """The test's index as pip's extra index (PyPI stays the main one: setuptools and wheel come from there)."""
    with extra_index(monkeypatch) as served:
        yield served


async def test_plain_pip_download_runs_the_sdists_setup_py_on_the_host(index: PackageIndex, tmp_path: Path) -> None:
    # the control: what the marker tests guard against is real (pip prepares an sdist's metadata here)
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    index.add_sdist(name, "1.0", marker)
    res = await run_host([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp_path / "d"),
                          name], cwd=tmp_path)
    assert res.ok, res.stderr
    assert marker.exists()


async def test_an_sdist_is_fetched_as_a_file_with_its_listed_hash(index: PackageIndex, tmp_path: Path) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    index.add_sdist(name, "1.0", marker)
    index.add_sdist(name, "1.2", marker)
    got = await fetch_sdist(f"{name}<1.1", tmp_path / "sdist", [index.url])
    assert str(got.version) == "1.0" and (tmp_path / "sdist" / got.filename).is_file()
    assert build_requires(tmp_path / "sdist" / got.filename) == ["setuptools>=40.8.0", "wheel"]
    assert not marker.exists()


async def test_an_index_serving_another_file_than_it_lists_is_refused(index: PackageIndex, tmp_path: Path) -> None:
    name = unique_name()
    index.add_sdist(name, "1.0", tmp_path / "marker")
    filename = next(iter(index.files))
    index.listed[filename] = "0" * 64
    with pytest.raises(SandboxError, match=r"different .* than the one it lists"):
        await fetch_sdist(name, tmp_path / "sdist", [index.url])
    assert not (tmp_path / "sdist" / filename).exists()


@pytest.mark.parametrize("spec", ["--index-url=http://evil", "-e .", "pkg @ https://example.org/pkg.tar.gz",
                                  "./local/pkg", "/abs/path/pkg.whl", "pkg @ file:///tmp/pkg"])
def test_options_urls_and_paths_are_no_package_specs(spec: str) -> None:
    with pytest.raises(SandboxError, match=r"not a package spec|URL or a local path"):
        check_pip_specs([spec])


async def test_the_local_backend_refuses_an_sdist_only_package(index: PackageIndex, tmp_path: Path) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    index.add_sdist(name, "1.0", marker)
    async with LocalSandbox(load_template("python")) as sb:
        res = await sb.install([name])
    assert not res.ok
    assert "only a source distribution" in res.stderr and "Docker backend" in res.stderr
    assert not marker.exists()


async def test_the_local_backend_records_a_wheel_install(tmp_path: Path) -> None:
    async with LocalSandbox(load_template("python")) as sb:
        res = await sb.install(["six==1.16.0"])
    assert res.ok and isinstance(res, InstallResult)
    [six] = res.files
    assert (six.name, six.version, six.built) == ("six", "1.16.0", "index") and len(six.sha256) == 64


@pytest.mark.docker
async def test_an_sdist_is_built_in_the_sandbox_and_the_tests_see_it(
        docker_images: None, index: PackageIndex, tmp_path: Path) -> None:
    marker = tmp_path / "ran" / "marker"
    name = unique_name()
    module = index.add_sdist(name, "1.0", marker, value=7)
    async with DockerSandbox(load_template("python")) as sb:
        res = await sb.install([name])
        assert res.ok, res.stderr
        assert isinstance(res, InstallResult)
        [built] = [f for f in res.files if f.name == name]
        assert (built.version, built.built, built.filename) == ("1.0", "sandbox", f"{module}-1.0.tar.gz")
        assert built.sha256 == index.listed[built.filename] and built.modules == (module,)
        await sb.sync({"test_it.py": f"import {module}\ndef test_value():\n    assert {module}.VALUE == 7\n".encode()})
        report = await sb.run_tests()
        assert report.passed == 1, report.raw
        again = await sb.install([name])  # the cached layer still says what it holds
        assert isinstance(again, InstallResult) and [f.built for f in again.files if f.name == name] == ["sandbox"]
    assert not marker.exists()


@pytest.mark.docker
async def test_an_sdist_whose_build_fails_or_hangs_is_said_and_nothing_runs_here(
        docker_images: None, index: PackageIndex, tmp_path: Path) -> None:
    marker = tmp_path / "ran" / "marker"
    broken, hung = unique_name(), unique_name()
    index.add_sdist(broken, "1.0", marker, body="raise SystemExit('this package does not build')")
    index.add_sdist(hung, "1.0", marker, body="import time\ntime.sleep(600)")
    async with DockerSandbox(load_template("python"), limits=Limits(exec_timeout=20)) as sb:
        failed = await sb.install([broken])
        stopped = await sb.install([hung])
    assert not failed.ok and "building" in failed.stderr and "failed" in failed.stderr
    assert "does not build" in failed.stderr
    assert not stopped.ok and "longer than its timeout" in stopped.stderr
    assert not marker.exists()


@pytest.mark.docker
async def test_a_build_requirement_only_the_setup_code_names_is_fetched_and_the_build_tried_again(
        docker_images: None, index: PackageIndex, tmp_path: Path) -> None:
    # avro-python3's setup.py asks for isort and pycodestyle (`setup_requires`): pip asks for them inside the build
    marker = tmp_path / "ran" / "marker"
    helper, needs = unique_name(), unique_name()
    index.add_wheel(helper, "2.0")
    module = index.add_sdist(needs, "1.0", marker, value=5, setup_args=f"setup_requires=[{helper!r}]")
    async with DockerSandbox(load_template("python")) as sb:
        res = await sb.install([needs])
        assert res.ok, res.stderr
        assert (await sb.exec(["python3", "-c", f"import {module}; assert {module}.VALUE == 5"])).ok
    assert not marker.exists()


@pytest.mark.docker
async def test_a_wheel_only_package_installs_as_before(docker_images: None) -> None:
    async with DockerSandbox(load_template("python")) as sb:
        res = await sb.install(["six==1.16.0"])
        assert res.ok, res.stderr
        assert isinstance(res, InstallResult)
        assert [(f.name, f.version, f.built, f.modules) for f in res.files] == [("six", "1.16.0", "index", ("six",))]
        assert (await sb.exec(["python3", "-c", "import six"])).ok


async def test_npm_fetches_run_no_lifecycle_scripts(tmp_path: Path) -> None:
    marker = tmp_path / "ran" / "marker"
    package = {"name": "gl-marker", "version": "1.0.0",
               "scripts": {"postinstall": f"mkdir -p {marker.parent} && touch {marker}"}}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = json.dumps(package).encode()
        info = tarfile.TarInfo("package/package.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    tgz = tmp_path / "gl-marker-1.0.0.tgz"
    tgz.write_bytes(buf.getvalue())
    dest = tmp_path / "resolve"
    dest.mkdir()
    [argv] = resolve_argv("npm", [str(tgz)], dest)
    assert "--ignore-scripts" in argv
    res = await run_host(argv, cwd=dest)
    assert res.ok, res.stderr
    assert (dest / "node_modules" / "gl-marker" / "package.json").is_file()
    assert not marker.exists()
    fresh = tmp_path / "control"
    fresh.mkdir()
    [plain] = resolve_argv("npm", [str(tgz)], fresh)
    control = await run_host([a for a in plain if a != "--ignore-scripts"], cwd=fresh)  # the script is real
    assert control.ok and marker.exists()


def test_cargo_vendors_sources_and_builds_nothing(tmp_path: Path) -> None:
    [argv] = resolve_argv("cargo", ["serde@1"], tmp_path)
    assert argv[:2] == ["cargo", "vendor"]  # vendor copies crate sources; no build.rs runs (cargo build would)
