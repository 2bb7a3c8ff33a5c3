"""The CLI's exit codes: one meaning each, the same for every command (README, "Exit codes").

0: green. 1: ran, but not green. 2: usage error (flags, settings). 3: environment problem:
no sandbox backend, no model endpoint or a model server that failed, no tests found.
"""

from __future__ import annotations

GREEN = 0
NOT_GREEN = 1
USAGE = 2
ENVIRONMENT = 3

# Done outcomes that mean the run could not do its job here, whatever the code: "no_tests" (nothing
# to check a fix against), "error" (a model server or sandbox that failed, told in the summary) and
# "environment" (the project's tests cannot run in the sandbox: agent/environment/diagnosis.py).
_ENVIRONMENT_OUTCOMES = ("no_tests", "error", "environment")


def for_outcome(outcome: str, green: tuple[str, ...] = ("green", "already_green")) -> int:
    """The exit code of a run that ended with `outcome`."""
    if outcome in green:
        return GREEN
    return ENVIRONMENT if outcome in _ENVIRONMENT_OUTCOMES else NOT_GREEN
