"""The coverage pass in the real Docker sandbox: per-test lines, hung and flooding tests, coverage missing.

And what retrieval makes of it: the shop's bug is two calls below what the failing test calls, with
no traceback frame in shop/; the static ranking puts it last in its module, the coverage pass lifts
it over the code the passing tests run too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from greenloop.retrieval import Location, RepoIndex, locate
from greenloop_sandbox import DockerSandbox, Limits, Spectrum, load_template, run_spectrum
from tests.support import shop

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_images")]
CASE_TIMEOUT = 2.0


@pytest.fixture
async def sandbox() -> AsyncIterator[DockerSandbox]:
    limits = Limits(test_case_timeout=CASE_TIMEOUT, test_timeout=120, output_limit=100_000)
    async with DockerSandbox(load_template("python"), limits=limits) as sb:
        yield sb


def _rank(found: list[Location], symbol: str) -> int:
    return next((i for i, loc in enumerate(found, 1) if loc.symbol == symbol), 99)


async def _rankings(
    sandbox: DockerSandbox, files: dict[str, bytes], spectrum: Spectrum
) -> tuple[list[Location], list[Location]]:
    """The failing test's run ranked without and with the spectrum (one run: near-ties stay put)."""
    report = await sandbox.run_tests([shop.FAILING])
    assert report.failed == 1 and not any("shop/" in f.traceback for f in report.failures)
    index = RepoIndex()
    await index.update(files)
    return (await locate(index, report.failures, top_k=10),
            await locate(index, report.failures, top_k=10, spectrum=spectrum))


async def test_each_test_has_its_own_lines_and_outcome(sandbox: DockerSandbox) -> None:
    await sandbox.sync(shop.files())
    spectrum = await run_spectrum(sandbox, [shop.FAILING])
    assert spectrum.note == ""
    [failing] = spectrum.failing
    assert failing.test_id == shop.FAILING and failing.focus
    assert {t.test_id.rsplit("::", 1)[1] for t in spectrum.passing} == {
        "test_empty_cart_costs_nothing", "test_total_adds_the_lines", "test_receipt_lists_every_line",
        "test_rejects_zero_quantity",
    }
    cart = shop.CART.splitlines()
    discount = next(n for n, line in enumerate(cart, 1) if "return gross - gross * rate" in line)
    assert discount in failing.lines["shop/cart.py"]
    assert all(discount not in t.lines.get("shop/cart.py", []) for t in spectrum.passing)


async def test_an_ini_file_in_tests_keeps_the_ids_from_the_workspace_root(sandbox: DockerSandbox) -> None:
    # `tests/pytest.ini` makes tests/ pytest's rootdir and its node ids `test_cart.py::...`: the failing
    # test is still found by its root id, runs last with its own lines, and every id is the root's
    await sandbox.sync({**shop.files(), "tests/pytest.ini": b"[pytest]\n"})
    spectrum = await run_spectrum(sandbox, [shop.FAILING])
    assert spectrum.note == ""
    [failing] = spectrum.failing
    assert failing.test_id == shop.FAILING and failing.focus and failing.lines.get("shop/cart.py")
    assert len(spectrum.passing) == 4 and all(t.test_id.startswith("tests/test_cart.py::") for t in spectrum.tests)


async def test_coverage_lifts_the_bug_two_calls_below_the_test(sandbox: DockerSandbox) -> None:
    files = shop.files()
    await sandbox.sync(files)
    spectrum = await run_spectrum(sandbox, [shop.FAILING])
    without, with_coverage = await _rankings(sandbox, files, spectrum)
    # statically it is among the module's least likely functions (no call from the test, no frame:
    # 7th of 7 here); with coverage (the static and the Ochiai order fused by rank) it passes
    # Cart.total, the constructor and receipt, which the passing tests run too (3rd). It does not rank
    # first: its caller line_total's `gross -= bulk_discount(...)` line also ran in the failing test only
    # (the same Ochiai value), and the static evidence puts what the test calls (Cart.add) ahead.
    assert _rank(with_coverage, shop.BUGGY) < _rank(without, shop.BUGGY)
    assert _rank(with_coverage, shop.BUGGY) <= 3 and _rank(without, shop.BUGGY) > 3
    buggy = next(loc for loc in with_coverage if loc.symbol == shop.BUGGY)
    executed = next(s for s in buggy.to_json()["signals"] if s["name"] == "executed")  # type: ignore[attr-defined]
    assert executed["value"] == 1.0 and "0 of 4 passing" in executed["note"]
    # what the passing tests run as well is less suspect: Cart.add ran in all but one of them
    add = next(loc for loc in with_coverage if loc.symbol == "Cart.add")
    assert next(s.value for s in add.signals if s.name == "executed") < 0.6


async def test_a_hung_and_a_flooding_file_mate_end_at_the_per_test_timeout(sandbox: DockerSandbox) -> None:
    files = shop.files(hung=True)
    await sandbox.sync(files)
    started = time.monotonic()
    spectrum = await run_spectrum(sandbox, [shop.FAILING], seconds=30)
    assert time.monotonic() - started < 40  # two tests at 2 s each, not the 30 s budget or the run's 120 s
    outcomes = {t.test_id.rsplit("::", 1)[1]: t.outcome for t in spectrum.tests}
    assert outcomes["test_hangs"] == "failed" and outcomes["test_floods"] == "failed"
    assert [t.test_id for t in spectrum.failing] == [shop.FAILING]  # file-mates failing for their own reasons
    _, found = await _rankings(sandbox, files, spectrum)
    assert _rank(found, shop.BUGGY) <= 4


async def test_coverage_missing_in_the_image_is_a_note_and_ranking_goes_on(sandbox: DockerSandbox) -> None:
    files = shop.files()
    await sandbox.sync(files)
    # an interpreter that cannot import coverage: a package of that name that fails first on the path
    await sandbox.exec("mkdir -p /tmp/nocov/coverage && echo 'raise ImportError(\"gone\")' "
                       "> /tmp/nocov/coverage/__init__.py")
    sandbox.template = replace(sandbox.template,
                               spectrum_command="PYTHONPATH=/tmp/nocov " + sandbox.template.spectrum_command)
    spectrum = await run_spectrum(sandbox, [shop.FAILING])
    assert spectrum.tests == [] and "coverage.py is not installed" in spectrum.note
    without, with_note = await _rankings(sandbox, files, spectrum)
    assert with_note == without
