"""greenloop_sandbox: run a workspace's commands and tests in isolation.

A standalone library: it imports nothing from `greenloop`. Backends share one
async interface (`Sandbox`); templates describe a language's environment.
"""

from greenloop_sandbox.base import ExecResult, Sandbox, SandboxError
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

__all__ = ["ExecResult", "Sandbox", "SandboxError", "TestCase", "TestFailure", "TestReport"]
