"""The node template's coverage pass (run_spectrum.js, V8 coverage) in both backends.

A tiny project: src/price.js has `discount` (the bug) and `tax`; test/price.test.js has one failing test
that runs `discount` and two passing tests, one of them in a describe block, that run `tax`. The
spectrum's ids must be the TAP parser's, or retrieval would not know the failing test.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from greenloop.retrieval import RepoIndex, locate
from greenloop_sandbox import DockerSandbox, Limits, LocalSandbox, Sandbox, load_template, run_spectrum

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]

PRICE = b"""\
function discount(price, percent) {
  const off = price * percent / 100;
  return price + off;
}

function tax(price) {
  const rate = 0.2;
  return price * (1 + rate);
}

module.exports = { discount, tax };
"""

TESTS = b"""\
const test = require('node:test');
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { discount, tax } = require('../src/price');

test('discount takes the percent off', () => {
  assert.strictEqual(discount(200, 10), 180);
});

test('tax adds a fifth', () => {
  assert.strictEqual(tax(100), 120);
});

describe('tax (rounding)', () => {
  it('keeps zero at zero', () => {
    assert.strictEqual(tax(0), 0);
  });
});
"""

FILES = {"package.json": b'{"name": "price", "version": "1.0.0"}\n', "src/price.js": PRICE,
         "test/price.test.js": TESTS}
FAILING = "discount takes the percent off"


@pytest.fixture
async def sandbox(request: pytest.FixtureRequest, backend: str) -> AsyncIterator[Sandbox]:
    if backend == "docker":
        request.getfixturevalue("docker_images")
    limits = Limits(test_case_timeout=5.0, test_timeout=120, output_limit=100_000)
    cls = DockerSandbox if backend == "docker" else LocalSandbox
    async with cls(load_template("node"), limits=limits) as sb:
        yield sb


def _body(source: bytes, function: str) -> set[int]:
    """The line numbers of `function`'s body (from its `function` line to its closing brace)."""
    lines = source.decode().splitlines()
    start = next(n for n, line in enumerate(lines, 1) if line.startswith(f"function {function}("))
    end = next(n for n, line in enumerate(lines, 1) if n > start and line == "}")
    return set(range(start + 1, end + 1))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_each_node_test_has_its_own_lines_and_the_parsers_id(sandbox: Sandbox) -> None:
    await sandbox.sync(FILES)
    report = await sandbox.run_tests()
    assert [f.test_id for f in report.failures] == [FAILING]
    spectrum = await run_spectrum(sandbox, [f.test_id for f in report.failures])
    assert spectrum.note == ""
    [failing] = spectrum.failing
    assert failing.test_id == FAILING and failing.focus and failing.outcome == "failed"
    # the parser's ids for the passing tests too (whatever it makes of the describe block)
    assert {t.test_id for t in spectrum.passing} == {c.test_id for c in report.cases if c.outcome == "passed"}
    assert len(spectrum.passing) == 2 and not any(t.focus for t in spectrum.passing)
    assert [t.test_id for t in spectrum.tests][-1] == FAILING  # the focus test runs last
    discount, tax = _body(PRICE, "discount"), _body(PRICE, "tax")
    assert discount <= set(failing.lines["src/price.js"])
    assert not tax & set(failing.lines["src/price.js"])
    for passing in spectrum.passing:
        assert tax <= set(passing.lines["src/price.js"])
        assert not discount & set(passing.lines["src/price.js"])
    assert all(not p.startswith(("node:", "/")) and "node_modules" not in p for t in spectrum.tests for p in t.lines)


NESTED = b"""\
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { discount, tax } = require('../src/price');

describe('price', () => {
  it('taxes zero as zero', () => {
    assert.strictEqual(tax(0), 0);
  });
  describe('discount', () => {
    it('takes the percent off', () => {
      assert.strictEqual(discount(200, 10), 180);
    });
  });
});

describe('tax', () => {
  it('adds a fifth', () => {
    assert.strictEqual(tax(100), 120);
  });
});
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_tests_in_nested_describes_have_the_parsers_ids(sandbox: Sandbox) -> None:
    # node prints a describe's own result after its tests': the ids must carry the suites all the same
    await sandbox.sync({**FILES, "test/price.test.js": NESTED})
    report = await sandbox.run_tests()
    assert [f.test_id for f in report.failures] == ["price > discount > takes the percent off"]
    assert report.failed == 1 and report.errors == 0  # the failing suites are not failures of their own
    assert {c.test_id: c.outcome for c in report.cases} == {
        "price > taxes zero as zero": "passed", "price > discount > takes the percent off": "failed",
        "tax > adds a fifth": "passed"}
    spectrum = await run_spectrum(sandbox, [f.test_id for f in report.failures])
    assert spectrum.note == ""
    assert {t.test_id: t.outcome for t in spectrum.tests} == {c.test_id: c.outcome for c in report.cases}
    [failing] = spectrum.failing
    assert failing.focus and _body(PRICE, "discount") <= set(failing.lines["src/price.js"])
    for passing in spectrum.passing:
        assert not _body(PRICE, "discount") & set(passing.lines["src/price.js"])


@pytest.mark.parametrize("backend", BACKENDS)
async def test_max_tests_keeps_the_focus_test(sandbox: Sandbox) -> None:
    await sandbox.sync(FILES)
    spectrum = await run_spectrum(sandbox, [FAILING], max_tests=1)
    assert [(t.test_id, t.focus) for t in spectrum.tests] == [(FAILING, True)]


HUNG = b"""\
test('spins forever', () => {
  for (;;) {}
});
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hung_file_mate_ends_and_the_focus_test_still_runs(sandbox: Sandbox) -> None:
    # node 20 (local) ends it at --test-timeout (5 s); node 18 (the image) has none: the runner kills it
    # at the end of the `seconds` budget
    await sandbox.sync({**FILES, "test/price.test.js": TESTS + HUNG})
    started = time.monotonic()
    spectrum = await run_spectrum(sandbox, [FAILING], seconds=3)
    assert time.monotonic() - started < 40
    outcomes = {t.test_id: t.outcome for t in spectrum.tests}
    # node's timeout is a testTimeoutFailure ("error", as the TAP parser has it); a killed run "failed"
    assert outcomes["spins forever"] in ("failed", "error") and outcomes[FAILING] == "failed"
    assert [t.test_id for t in spectrum.failing] == [FAILING]
    assert _body(PRICE, "discount") <= set(spectrum.failing[0].lines["src/price.js"])


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_syntax_error_in_the_test_file_is_a_note(sandbox: Sandbox) -> None:
    await sandbox.sync({**FILES, "test/price.test.js": TESTS.replace(b"() => {\n  assert", b"() => {{\n  assert", 1)})
    report = await sandbox.run_tests()
    assert not report.green
    spectrum = await run_spectrum(sandbox, [f.test_id for f in report.failures] + [FAILING])
    assert spectrum.tests == [] and "no test file holds the focus tests" in spectrum.note


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_unknown_focus_id_is_a_note(sandbox: Sandbox) -> None:
    await sandbox.sync(FILES)
    spectrum = await run_spectrum(sandbox, ["no such test"])
    assert spectrum.tests == [] and "no test file holds the focus tests" in spectrum.note


async def test_retrieval_ranks_the_function_only_the_failing_test_ran_first() -> None:
    async with LocalSandbox(load_template("node"), limits=Limits(test_case_timeout=5.0)) as sb:
        await sb.sync(FILES)
        report = await sb.run_tests()
        spectrum = await run_spectrum(sb, [f.test_id for f in report.failures])
    index = RepoIndex()
    await index.update(FILES)
    found = await locate(index, report.failures, top_k=10, spectrum=spectrum)
    assert found[0].symbol == "discount"
    executed = next(s for s in found[0].signals if s.name == "executed")
    assert executed.value == 1.0
    tax = next(loc for loc in found if loc.symbol == "tax")
    assert next((s.value for s in tax.signals if s.name == "executed"), 0.0) < 0.5
