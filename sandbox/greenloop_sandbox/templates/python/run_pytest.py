"""The python template's test runner: pytest, where a test module whose import hangs fails at the timeout.

Run as `python3 run_pytest.py <pytest args>` inside the sandbox (baked into the image, or from
the package on the local backend's host). Not imported by greenloop_sandbox.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Generator
from types import FrameType

import pytest


class ImportTimeout:
    """Importing a test module (and the code it imports) gets pytest-timeout's `--timeout` too.

    pytest-timeout covers a test's setup, call and teardown, not collection: module-level code
    in a loop held the run until the whole run's timeout, with no frames. The failure is raised
    inside the import, so the collection error carries the frames where it hung.
    """

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, None, None]:
        seconds = collector.config.getoption("timeout", None) if isinstance(collector, pytest.Module) else None
        if not seconds:
            yield
            return

        def stop(signum: int, frame: FrameType | None) -> None:
            __tracebackhide__ = True
            pytest.fail(f"Timeout >{seconds:g}s importing {collector.nodeid}")

        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, float(seconds))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def main() -> None:
    sys.path[0] = os.getcwd()  # as `python3 -m pytest` has it: the project's modules import from its root
    code = pytest.main(plugins=[ImportTimeout()])
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without atexit handlers: multiprocessing joins its children there, so a timed-out
    # test's hung child would hold the run until the whole run's timeout. The sandbox kills
    # such leftovers once this returns.
    os._exit(int(code))


if __name__ == "__main__":
    main()
