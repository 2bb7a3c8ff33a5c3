"""The python template's coverage runner: chosen tests under coverage.py, one context per test.

    python3 run_spectrum.py --focus ID [--focus ID ...] [--max-tests N] [--seconds S] -- <pytest args>

Runs the test files of the `--focus` ids (the failing tests) with pytest: the files'
other tests until `--max-tests` tests or `--seconds` have gone by, then the focus
tests, which always run. They run last so that code that runs once per process
(caches, lazy imports, registrations) counts for a passing test, not for them. Each test runs in its own coverage.py
dynamic context, so the lines it executed are known per test. Test ids are the ones pytest
accepts from the workspace root, whatever pytest's rootdir (an ini file in `tests/` makes that
folder the rootdir, and pytest's node ids relative to it). Prints one line,
`SPECTRUM <base64 of zlib'd JSON>`: {"tests": [{"id", "outcome", "focus", "lines": {path:
"1-4,9"}}], "seconds", "note"}; paths are relative to the working directory, the
workspace. The tests' own output goes to /dev/null (a test that floods it costs
nothing but its time; a hung one ends at pytest-timeout's `--timeout`).
Not imported by greenloop_sandbox; the local backend runs it from the package.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
import zlib
from collections.abc import Generator
from typing import Any

import pytest
from run_pytest import arguments, plugins

MARK = "SPECTRUM "
_MAX_BYTES = 600_000  # the encoded line stays well under the sandbox's output cap


class Spectrum:
    """Orders and caps the tests, switches coverage's context per test, and records outcomes."""

    def __init__(self, cov: Any, focus: list[str], max_tests: int, seconds: float) -> None:
        self.cov = cov
        self.focus = focus
        self.max_tests = max_tests
        self.deadline = time.monotonic() + seconds
        self.outcomes: dict[str, str] = {}
        self.ids: dict[str, str] = {}  # pytest's node id -> the id from the workspace root

    def root_id(self, nodeid: str) -> str:
        return self.ids.get(nodeid, nodeid)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        root = os.getcwd()
        rootdir = str(getattr(config, "rootpath", None) or getattr(config, "rootdir", root))  # rootdir: pytest < 6.1
        for item in items:
            file, sep, name = item.nodeid.partition("::")
            self.ids[item.nodeid] = os.path.relpath(os.path.join(rootdir, file), root).replace(os.sep, "/") + sep + name
        wanted = set(self.focus)
        first = [i for i in items if self.root_id(i.nodeid) in wanted]
        rest = [i for i in items if self.root_id(i.nodeid) not in wanted]
        room = max(0, self.max_tests - len(first))
        config.hook.pytest_deselected(items=rest[room:])
        items[:] = rest[:room] + first  # last: one-time setup (caches, lazy imports) runs in a passing test

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        if self.root_id(item.nodeid) not in self.focus and time.monotonic() > self.deadline:
            return True  # out of time: the passing side of the spectrum stops here
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.cov.switch_context(self.root_id(item.nodeid))  # setup, call and teardown: fixtures run project code too

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            yield
        finally:
            self.cov.switch_context("")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        test = self.root_id(report.nodeid)
        old = self.outcomes.get(test)
        if report.failed:
            self.outcomes[test] = "failed" if report.when == "call" else "error"
        elif report.when == "call" or (report.skipped and old is None):
            self.outcomes.setdefault(test, "skipped" if report.skipped else "passed")


def ranges(lines: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3,7"."""
    out: list[str] = []
    start = prev = lines[0]
    for n in lines[1:]:
        if n != prev + 1:
            out.append(f"{start}-{prev}" if prev > start else str(start))
            start = n
        prev = n
    out.append(f"{start}-{prev}" if prev > start else str(start))
    return ",".join(out)


def per_test(data: Any, root: str) -> dict[str, dict[str, list[int]]]:
    """Test id -> workspace-relative path -> executed lines."""
    out: dict[str, dict[str, list[int]]] = {}
    for filename in data.measured_files():
        path = os.path.relpath(filename, root)
        if path.startswith(".."):
            continue
        for line, contexts in data.contexts_by_lineno(filename).items():
            for context in contexts:
                if context:
                    out.setdefault(context, {}).setdefault(path, []).append(line)
    return out


def encode(payload: dict[str, Any]) -> str:
    return base64.b64encode(zlib.compress(json.dumps(payload).encode(), 6)).decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--focus", action="append", default=[])
    parser.add_argument("--max-tests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    args, pytest_args = parser.parse_known_args()
    pytest_args = [a for a in pytest_args if a != "--"]
    started = time.monotonic()
    root = os.getcwd()
    sys.path[0] = root  # as `python3 -m pytest` has it: the project's modules import from its root
    out = os.fdopen(os.dup(1), "w")
    try:
        import coverage
    except ImportError:
        out.write(MARK + encode({"tests": [], "seconds": 0.0, "note": "coverage.py is not installed"}) + "\n")
        out.flush()
        os._exit(0)
    files = list(dict.fromkeys(i.split("::")[0] for i in args.focus))
    cov = coverage.Coverage(data_file=None, source=[root], branch=False, config_file=False)
    plugin = Spectrum(cov, args.focus, args.max_tests, args.seconds)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    cov.start()
    try:
        code = pytest.main(arguments([*pytest_args, "-p", "no:cacheprovider", "--capture=no", "-q", *files]),
                           plugins=[*plugins(), plugin])
    finally:
        cov.stop()
    lines = per_test(cov.get_data(), root)
    tests = [{"id": t, "outcome": o, "focus": t in plugin.focus, "lines": {p: ranges(sorted(set(n))) for p, n in lines.get(t, {}).items()}}
             for t, o in plugin.outcomes.items()]
    note = "" if plugin.outcomes else f"pytest ran no test (exit {int(code)})"
    payload = {"tests": tests, "seconds": round(time.monotonic() - started, 3), "note": note}
    text = encode(payload)
    while len(text) > _MAX_BYTES and len(tests) > len(args.focus):  # drop passing tests from the end
        tests = tests[: max(len(args.focus), len(tests) * 3 // 4)]
        payload["tests"], payload["note"] = tests, "passing tests cut to fit the output"
        text = encode(payload)
    out.write(MARK + text + "\n")
    out.flush()
    os._exit(0)  # as run_pytest.py: a timed-out test's hung child must not hold the run at exit


if __name__ == "__main__":
    main()
