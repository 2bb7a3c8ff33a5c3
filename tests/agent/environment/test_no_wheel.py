"""A pinned or declared release with no wheel for the sandbox's Python: the nearest release that has one, said; a
package with none at all named in a stop line. The choice is pure; the index is a real one on 127.0.0.1 serving
made-up releases (a compiled package: platform wheels for one Python, an sdist that cannot build without a
compiler), and the step runs end to end on a real Docker engine with real HTTP to the scripted model."""

from __future__ import annotations

import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from greenloop.agent import FixRequest, fix
from greenloop.agent.environment.installs import failing_package, tail
from greenloop.agent.environment.wheels import choose, nearest_wheels
from greenloop.agent.events import EnvironmentReady, TestsRan
from greenloop.cli import main
from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.pip_index import Releases, releases
from tests.agent.conftest import collect, tree_bytes, write_project
from tests.support.package_index import PackageIndex, extra_index, unique_name

OLD = f"cp38-cp38-manylinux_2_17_{platform.machine()}"  # a compiled release for Python 3.8 only
NEW = f"cp311-cp311-manylinux_2_17_{platform.machine()}"
NO_COMPILER = "raise SystemExit('error: command gcc failed: No such file or directory')"


def listed(versions: str, wheels: str, compiled: bool = True) -> Releases:
    return Releases(tuple(sorted((Version(v) for v in versions.split()), reverse=True)),
                    frozenset(Version(v) for v in wheels.split()), compiled)


def test_the_nearest_release_with_a_wheel_within_the_range_first_then_outside_it() -> None:
    rel = listed("1.0.0 1.1.0 1.2.0 1.3.0 2.0.0", "1.2.0 1.3.0 2.0.0")
    # a lock's pin without a wheel: the oldest newer release the declared range allows that has one
    assert choose(SpecifierSet("==1.0.0"), SpecifierSet(">=1.0,<2"), rel, "3.11") == (Version("1.2.0"), True)
    # the range allows no release with a wheel: the nearest outside it, flagged
    assert choose(SpecifierSet("<1.2"), SpecifierSet("<1.2"), rel, "3.11") == (Version("1.2.0"), False)
    assert choose(SpecifierSet("==2.5"), SpecifierSet(), listed("2.5 3.0", "1.0 2.0 3.0"), "3.11") == \
        (Version("3.0"), True)
    # only older releases have one: the newest of them
    assert choose(SpecifierSet(">=3"), SpecifierSet(">=3"), listed("1.0 2.0 3.0", "1.0 2.0"), "3.11") == \
        (Version("2.0"), False)


def test_a_spec_is_kept_when_a_release_it_allows_has_a_wheel_or_the_package_is_pure_python() -> None:
    rel = listed("1.0.0 1.2.0", "1.2.0")
    assert choose(SpecifierSet(">=1.0"), SpecifierSet(), rel, "3.11") is None  # pip takes 1.2.0 itself
    # a pure-python sdist builds in the no-network container: the project's own version stays
    assert choose(SpecifierSet("==1.0.0"), SpecifierSet(), listed("1.0.0 1.2.0", "1.2.0", False), "3.11") is None
    assert choose(SpecifierSet("==9.9"), SpecifierSet(), rel, "3.11") is None  # no such release: pip says so
    said = choose(SpecifierSet("<2"), SpecifierSet(), listed("1.0 1.1", ""), "3.11")
    assert isinstance(said, str) and "no release has a wheel for Python 3.11" in said and "compiler" in said


def test_the_package_that_failed_is_read_from_pips_output_and_a_conflict_is_cut_short() -> None:
    built = ("building avro-python3-1.10.2.tar.gz from source in the sandbox (no network) failed (exit code 1); "
             "not installed:\nERROR: No matching distribution found for pycodestyle")
    assert failing_package(built) == "avro_python3"  # the sdist whose build failed, not what its build missed
    assert tail(built).startswith("building avro-python3-1.10.2.tar.gz from source")
    assert failing_package("  ERROR: Failed building wheel for typed_ast\nERROR: Failed to build") == "typed_ast"
    assert failing_package("ERROR: No matching distribution found for coverage<6,>=5.0") == "coverage"
    conflict = ("ERROR: Cannot install mitmproxy==0.18.1, mitmproxy==0.18.2, mitmproxy==1.0.0 and mitmproxy==10.2 "
                "because these package versions have conflicting dependencies.")
    assert failing_package(conflict) == "mitmproxy"
    assert tail(conflict) == ("ERROR: Cannot install mitmproxy (any of 4 versions) because these package versions "
                              "have conflicting dependencies.")
    assert failing_package("Killed") == ""


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[PackageIndex, str, str, Path]]:
    """A made-up compiled package: 1.0.0 (an sdist that needs a compiler, a wheel for Python 3.8), 1.2.0 and
    2.0.0 with wheels for 3.11 (VALUE 12 and 20)."""
    with extra_index(monkeypatch) as index:
        name, marker = unique_name(), tmp_path / "host-marker"
        module = index.add_sdist(name, "1.0.0", marker, body=NO_COMPILER, value=10)
        index.add_wheel(name, "1.0.0", tag=OLD, value=10)
        index.add_wheel(name, "1.2.0", tag=NEW, value=12)
        index.add_wheel(name, "2.0.0", tag=NEW, value=20)
        yield index, name, module, marker


async def test_the_index_says_which_releases_have_a_wheel_for_this_python(
        compiled: tuple[PackageIndex, str, str, Path]) -> None:
    index, name, _, _ = compiled
    found = await releases(name, "3.11", [index.url])
    assert found is not None and found.compiled
    assert [str(v) for v in found.versions] == ["2.0.0", "1.2.0", "1.0.0"]
    assert sorted(str(v) for v in found.wheels) == ["1.2.0", "2.0.0"]
    assert (await releases(name, "3.8", [index.url])) is not None
    assert sorted(str(v) for v in (await releases(name, "3.8", [index.url])).wheels) == ["1.0.0"]  # type: ignore[union-attr]
    assert await releases("no-such-name-here", "3.11", [index.url]) is None


async def test_a_range_no_release_with_a_wheel_fits_moves_outside_it_and_says_so(
        compiled: tuple[PackageIndex, str, str, Path]) -> None:
    _, name, _, _ = compiled
    moved = await nearest_wheels([f"{name}<1.1", "six==1.16.0"], "3.11", {normal_name(name): SpecifierSet("<1.1")})
    assert moved.specs == [f"{name}==1.2.0", "six==1.16.0"]  # six has a wheel: kept as the project wrote it
    assert moved.lines == [f"{name}<1.1: no release the project allows (<1.1) has a wheel for Python 3.11; {name} "
                           "1.2.0 instead, OUTSIDE that range (the nearest release that has one)"]
    assert moved.unavailable == []


async def test_a_wheel_for_this_pythons_abi_built_before_its_release_candidate_does_not_count(
        compiled: tuple[PackageIndex, str, str, Path]) -> None:
    # coverage 6.1.2 has a cp311 wheel from 2021, built against a 3.11 alpha: it ends pytest silently on 3.11.0
    index, name, _, _ = compiled
    index.add_wheel(name, "1.1.0", tag=NEW, value=11)
    index.uploaded[f"{name.replace('-', '_')}-1.1.0-{NEW}.whl"] = "2021-11-11T01:17:58Z"
    index.uploaded[f"{name.replace('-', '_')}-1.2.0-{NEW}.whl"] = "2022-08-16T14:39:32Z"
    found = await releases(name, "3.11", [index.url])
    assert found is not None and sorted(str(v) for v in found.wheels) == ["1.2.0", "2.0.0"]
    assert "1.1.0" in {str(v) for v in found.versions}


def uv_lock(pins: dict[str, str]) -> str:
    rows = "".join(f'\n[[package]]\nname = "{n}"\nversion = "{v}"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
                   for n, v in pins.items())
    return f'version = 1\nrequires-python = ">=3.8"\n{rows}'


@pytest.mark.docker
async def test_a_locked_release_without_a_wheel_moves_to_the_nearest_one_and_the_rest_of_the_lock_stays(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, compiled: tuple[PackageIndex, str, str, Path]) -> None:
    index, name, module, marker = compiled
    other = unique_name()
    other_module = index.add_wheel(other, "3.0.0", value=3)
    ws = write_project(tmp_path / "ws", {
        "uv.lock": uv_lock({name: "1.0.0", other: "3.0.0"}),
        "pyproject.toml": f'[project]\nname = "app"\nversion = "0"\ndependencies = ["{name}>=1.0,<2", "{other}"]\n',
        "app.py": f"import {module}, {other_module}\n\n\ndef total():\n    return {module}.VALUE + {other_module}.VALUE\n",
        "test_app.py": "from app import total\n\n\ndef test_total():\n    assert total() == 16\n"})
    scripted_llm.script("no idea")
    events, _ = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.source == "uv.lock", ready.lines  # not thrown away for one package
    assert f"{name}==1.2.0" in ready.packages and f"{other}==3.0.0" in ready.packages, ready.lines
    assert f"{name}==1.0.0: no wheel for Python 3.11; {name} 1.2.0 instead, the nearest release within the " \
           "project's range (<2,>=1.0) that has one" in ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1) and "assert 15 == 16" in str(first.failures[0])  # 12 + 3: ran
    assert not marker.exists()  # no sdist's code ran on this machine


@pytest.mark.docker
def test_a_package_no_release_of_which_has_a_wheel_stops_the_run_naming_it(
        tmp_path: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with extra_index(monkeypatch) as index:
        name = unique_name()
        module = index.add_sdist(name, "1.0.0", tmp_path / "host-marker", body=NO_COMPILER)
        index.add_wheel(name, "1.0.0", tag=OLD)
        ws = write_project(tmp_path / "ws", {
            "requirements.txt": f"{name}>=1.0\n",
            "app.py": f"import {module}\n\n\ndef value():\n    return {module}.VALUE\n",
            "test_app.py": "from app import value\n\n\ndef test_value():\n    assert value() == 42\n"})
        before = tree_bytes(ws)
        code = main(["fix", str(ws), "--base-url", scripted_llm.base_url, "--sandbox", "docker"])
    text = " ".join((lambda o: o.out + o.err)(capsys.readouterr()).split())
    assert code == 3, text
    assert "no wheel at app.py:1" in text and f"No module named '{module}'" in text
    assert f"{module} has no wheel for Python 3.11 in any release" in text and "project.image" in text
    after = {path: data for path, data in tree_bytes(ws).items() if not path.startswith(".greenloop/")}
    assert scripted_llm.requests == [] and after == before
    assert not (tmp_path / "host-marker").exists()


@pytest.mark.docker
async def test_a_locked_package_that_does_not_build_is_left_out_and_the_rest_of_the_lock_installed(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with extra_index(monkeypatch) as index:
        broken, good = unique_name(), unique_name()
        index.add_sdist(broken, "1.0.0", tmp_path / "host-marker", body=NO_COMPILER)  # pure python, no wheel at all
        module = index.add_wheel(good, "3.0.0", value=3)
        ws = write_project(tmp_path / "ws", {
            "uv.lock": uv_lock({broken: "1.0.0", good: "3.0.0"}),
            "app.py": f"import {module}\n\n\ndef value():\n    return {module}.VALUE\n",
            "test_app.py": "from app import value\n\n\ndef test_value():\n    assert value() == 4\n"})
        scripted_llm.script("no idea")
        events, _ = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.source == "uv.lock" and ready.packages == [f"{good}==3.0.0"], ready.lines
    assert any(line.startswith(f"{broken}==1.0.0: left out, the rest installed without it (building "
                               f"{broken.replace('-', '_')}-1.0.0.tar.gz from source") for line in ready.lines), ready.lines
    assert ready.lines[-1] == f"uv.lock: 2 package(s), 1 installed; not installed: {broken}==1.0.0"
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1) and "assert 3 == 4" in str(first.failures[0])
    assert not (tmp_path / "host-marker").exists()


@pytest.mark.docker
async def test_declared_ranges_that_fail_together_for_no_one_package_are_installed_in_halves(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from greenloop_sandbox import pip_resolve

    monkeypatch.setattr(pip_resolve, "MAX_BUILDS", 1)  # two sdists to build: more than one install may build
    with extra_index(monkeypatch) as index:
        names = [unique_name() for _ in range(3)]
        modules = [index.add_sdist(names[0], "1.0", tmp_path / "host-marker", value=1),
                   index.add_sdist(names[1], "1.0", tmp_path / "host-marker", value=2),
                   index.add_wheel(names[2], "1.0", value=3)]
        ws = write_project(tmp_path / "ws", {
            "requirements.txt": "".join(f"{n}>=1\n" for n in names),
            "app.py": f"import {', '.join(modules)}\n\n\ndef total():\n    return "
                      + " + ".join(f"{m}.VALUE" for m in modules) + "\n",
            "test_app.py": "from app import total\n\n\ndef test_total():\n    assert total() == 7\n"})
        scripted_llm.script("no idea")
        events, _ = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert any(line.startswith("declared ranges: not installed together (more than 1 packages would have to be "
                               "built from source") and line.endswith("in parts instead") for line in ready.lines)
    assert ready.lines[-1] == "declared ranges: 3 package(s), 3 installed", ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1) and "assert 6 == 7" in str(first.failures[0])
    assert not (tmp_path / "host-marker").exists()
