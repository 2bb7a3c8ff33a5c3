"""The one structured test report every backend and parser produces."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TestFailure(BaseModel):
    """One failing (or erroring) test, as the runner reported it."""

    __test__ = False  # not a pytest test class

    test_id: str = Field(description="Runner-native id, e.g. 'tests/test_x.py::test_add'.")
    file: str | None = Field(default=None, description="Workspace-relative path of the test file.")
    line: int | None = Field(default=None, description="1-based line of the failure in `file`, if known.")
    message: str = Field(default="", description="Short failure message (assertion text, error).")
    traceback: str = Field(default="", description="Full failure text: traceback, panic, stack.")
    kind: str = Field(default="failure", description="'failure' or 'error' (collection/setup).")
    expected: str | None = Field(default=None, description="The assertion's expected value, where the report has it.")
    actual: str | None = Field(default=None, description="The value the test got instead, where the report has it.")


class TestCase(BaseModel):
    """One test and its outcome."""

    __test__ = False

    test_id: str
    outcome: str = Field(description="'passed' | 'failed' | 'error' | 'skipped'")
    duration: float = 0.0


class TestReport(BaseModel):
    """Totals plus failures; `raw` keeps the runner's output for retrieval."""

    __test__ = False

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[TestFailure] = Field(default_factory=list)
    cases: list[TestCase] = Field(default_factory=list)
    duration: float = 0.0
    exit_code: int | None = None
    timed_out: bool = Field(default=False, description="The test command was killed at its timeout.")
    raw: str = Field(default="", description="Combined stdout/stderr of the test command (capped).")
    parser: str = Field(default="", description="Which parser produced this report.")

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def green(self) -> bool:
        """True when tests ran and none failed or errored."""
        return self.failed == 0 and self.errors == 0 and self.passed > 0

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.errors} errors, {self.skipped} skipped"
