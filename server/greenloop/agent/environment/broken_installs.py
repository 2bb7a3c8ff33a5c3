"""A package the environment step installed that stops the test tool before any test ran: left out, and said.

An old project may declare a test plugin that today's test tool cannot load: pytest-catchlog (merged into
pytest 3.3) calls `py.builtin` when pytest loads its entry point, and pytest 7.2 and later have no
`py.builtin`. The run then stops in that plugin's module, before a test or the project's code ran; the
project's own tests are not at fault, and an older pytest does not help on this Python. So when the first
run ran no test and the deepest library frame of its traceback that is a module of a distribution this
step installed itself is found, that distribution is uninstalled in the sandbox's image and the tests run again; the
environment line names it and where the project declares it. A distribution the image had before the step
is never removed, and at most `MAX_REMOVED` are. A test module that could not be collected is no test that
ran (pytest writes it as an errored case, "collection failure"): fastapi's test extras pin aiofiles 0.5, whose
`asyncio.coroutine` (gone in Python 3.11) stops the import of every test module through starlette, which
imports aiofiles only when it is there. When the project's code imports the module itself, leaving it out
only makes it missing (`now_missing`): it is put back, and said. A module an ImportError only names as the one lacking a
name (`cannot import name '_safe_chars' from 'w3lib.url' (/usr/.../dist-packages/w3lib/url.py)`) is not a frame
the run stopped in: the code that imports it wants an older release of it (dependency_versions.py), and leaving
it out would only make it missing.
"""

from __future__ import annotations

import json
import re

from greenloop.agent.environment import diagnosis
from greenloop_sandbox.packages import normal_name, package_name
from greenloop_sandbox.report import TestReport

MAX_REMOVED = 2
MAX_PROBES = 4  # library modules of one traceback asked about in the sandbox
_LIBRARY_FRAME = re.compile(r"/(?:site|dist)-packages/(?P<top>[A-Za-z_]\w*)(?:/|\.py\b)")
_NAMED_BY_IMPORT = re.compile(r"cannot import name .{1,200}? from '[\w.]+' \([^)\n]*\)")  # the importer's wish
# run in the sandbox: the distributions that provide a top-level module (nothing is imported)
OWNERS = ("import importlib.metadata as md, json, sys; "
          "print(json.dumps(md.packages_distributions().get(sys.argv[1], [])))")


def stopping_modules(report: TestReport) -> list[str]:
    """The top-level library modules of the traceback of a run that ran no test, deepest first, at most
    `MAX_PROBES` ([] when a test ran). The deepest may be the test tool's own (`pytest.__getattr__` raising for
    a name it no longer has): the module at fault is the deepest one the step installed."""
    if diagnosis.ran_a_test(report):
        return []
    tops: list[str] = []
    for failure in report.failures:
        text = _NAMED_BY_IMPORT.sub("", f"{failure.message}\n{failure.traceback}")
        for found in reversed(list(_LIBRARY_FRAME.finditer(text))):
            if found["top"] not in tops:
                tops.append(found["top"])
    return tops[:MAX_PROBES]


def now_missing(report: TestReport, module: str) -> bool:
    """Whether the run says the module is not installed (the project's code imports it)."""
    return any(f"No module named '{module}" in f"{f.message}\n{f.traceback}" for f in report.failures)


def installed_owner(owners_json: str, installed: list[str]) -> str:
    """The spec among `installed` (what the step installed) whose distribution provides the module, per the
    sandbox's `OWNERS` output; "" when none of them does."""
    owners: set[str] = set()
    for line in owners_json.splitlines():  # stdout, then stderr: the line that is a JSON list
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, list):
            owners = {normal_name(str(d)) for d in found}
            break
    return next((spec for spec in installed if package_name(spec) in owners), "")


def said(report: TestReport) -> str:
    """The line the run stopped with (diagnosis.said of its first failure)."""
    return diagnosis.said(report.failures[0])[:200] if report.failures else ""
