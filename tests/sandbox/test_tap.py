"""node's TAP reporter -> test ids: children are printed before their describe's own result line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from greenloop_sandbox.parsers.common import ParseInput
from greenloop_sandbox.parsers.tap import parse_tap

NESTED = """\
const test = require('node:test');
const { describe, it } = require('node:test');
const assert = require('node:assert');

test('top level', () => {});

describe('suite one', () => {
  it('inner a', () => {});
  it('inner b', () => { assert.strictEqual(1, 2); });
});

describe('suite two', () => {
  it('inner c', () => {});
  describe('deeper', () => {
    it('inner d', () => {});
  });
});

test('after', () => {});
"""

IDS = ["top level", "suite one > inner a", "suite one > inner b", "suite two > inner c",
       "suite two > deeper > inner d", "after"]

# node 20's `node --test --test-reporter=tap` for NESTED in /w (bookworm's node 18.20 prints the same lines)
TAP = """\
TAP version 13
# Subtest: top level
ok 1 - top level
  ---
  duration_ms: 2.25823
  ...
# Subtest: suite one
    # Subtest: inner a
    ok 1 - inner a
      ---
      duration_ms: 0.117041
      ...
    # Subtest: inner b
    not ok 2 - inner b
      ---
      duration_ms: 1.080787
      location: '/w/test/nest.test.js:9:3'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:

        1 !== 2

      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      expected: 2
      actual: 1
      operator: 'strictEqual'
      stack: |-
        TestContext.<anonymous> (/w/test/nest.test.js:9:32)
        Test.runInAsyncScope (node:async_hooks:206:9)
        Test.run (node:internal/test_runner/test:796:25)
      ...
    1..2
not ok 2 - suite one
  ---
  duration_ms: 1.690922
  type: 'suite'
  location: '/w/test/nest.test.js:7:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: suite two
    # Subtest: inner c
    ok 1 - inner c
      ---
      duration_ms: 0.141965
      ...
    # Subtest: deeper
        # Subtest: inner d
        ok 1 - inner d
          ---
          duration_ms: 0.214186
          ...
        1..1
    ok 2 - deeper
      ---
      duration_ms: 0.429831
      type: 'suite'
      ...
    1..2
ok 3 - suite two
  ---
  duration_ms: 0.700503
  type: 'suite'
  ...
# Subtest: after
ok 4 - after
  ---
  duration_ms: 0.090046
  ...
1..4
# tests 6
# suites 3
# pass 5
# fail 1
"""


def _check(tap: str, root: str) -> None:
    report = parse_tap(ParseInput(output="", report=tap, exit_code=1, root=root))
    assert [c.test_id for c in report.cases] == IDS
    [failure] = report.failures  # the failing suite's own `not ok` is not another failure
    assert (failure.test_id, failure.file, failure.line) == ("suite one > inner b", "test/nest.test.js", 9)
    assert (report.passed, report.failed, report.errors, report.skipped) == (5, 1, 0, 0)


def test_tests_in_describe_blocks_are_named_by_their_suites() -> None:
    _check(TAP, "/w")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
def test_the_hosts_node_gives_the_same_ids(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "nest.test.js").write_text(NESTED)
    (tmp_path / "package.json").write_text('{"name": "nest", "version": "1.0.0"}\n')
    run = subprocess.run(["node", "--test", "--test-reporter=tap"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 1
    _check(run.stdout, str(tmp_path))


def test_flat_tap_keeps_its_names() -> None:
    report = parse_tap(ParseInput(output="TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n1..2\n", exit_code=1))
    assert [c.test_id for c in report.cases] == ["adds", "subtracts"]
    assert [f.test_id for f in report.failures] == ["subtracts"]


def test_a_file_wrapper_is_no_part_of_the_id_but_gives_the_file() -> None:
    # node nesting a file's tests under a subtest named by its path (the id leaves it out)
    tap = ("TAP version 13\n# Subtest: /w/test/a.test.js\n    # Subtest: s\n        # Subtest: t\n"
           "        not ok 1 - t\n          ---\n          error: 'boom'\n          ...\n        1..1\n"
           "    not ok 1 - s\n    1..1\nnot ok 1 - /w/test/a.test.js\n"
           "# Subtest: /w/test/b.test.js\n    # Subtest: u\n    ok 1 - u\n    1..1\nok 2 - /w/test/b.test.js\n1..2\n")
    report = parse_tap(ParseInput(output="", report=tap, exit_code=1, root="/w"))
    assert [(c.test_id, c.outcome) for c in report.cases] == [("s > t", "failed"), ("u", "passed")]
    [failure] = report.failures
    assert failure.file == "test/a.test.js"
