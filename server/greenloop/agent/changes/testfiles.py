"""Which workspace files are tests: the one rule the fix loop uses to keep the spec read-only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from greenloop.retrieval.index import is_test_path

if TYPE_CHECKING:
    from greenloop_sandbox import TestReport

READ_ONLY_REASON = (
    "{path} is a test file, and the tests are the specification: change the code under test so that "
    "they pass, not the tests (loop.edit_tests lets fix change tests)"
)
SPEC_REASON = (
    "{path} holds the acceptance tests (the request's own examples): they are the specification even where "
    "the other tests may change; change the code, or the test that contradicts them"
)


@dataclass(frozen=True)
class TestFiles:
    """Test files by retrieval's naming rule, the template's `test_globs` and `loop.test_paths`.

    `writable` opts out of the protection (`loop.edit_tests`; generation for the tests it wrote),
    except for the `spec` files (generation's acceptance tests), which stay read-only.
    """

    __test__ = False  # not a pytest class
    globs: tuple[str, ...] = ()
    writable: bool = False
    spec: frozenset[str] = frozenset()

    @classmethod
    def of(cls, template_globs: Iterable[str], extra: Iterable[str], *, writable: bool,
           spec: Iterable[str] = ()) -> TestFiles:
        return cls(globs=tuple(dict.fromkeys([*template_globs, *extra])), writable=writable, spec=frozenset(spec))

    def is_test(self, path: str) -> bool:
        return is_test_path(path) or any(fnmatchcase(path, g) for g in self.globs)

    def refusal(self, path: str) -> str | None:
        """Why an action on `path` is refused (None: it is allowed)."""
        if path in self.spec:
            return SPEC_REASON.format(path=path)
        if self.writable or not self.is_test(path):
            return None
        return READ_ONLY_REASON.format(path=path)

    def editable(self, path: str) -> bool:
        """Whether the loop may rewrite the test file `path` (writable tests, not the spec)."""
        return self.writable and path not in self.spec

    def spec_holds(self, report: TestReport) -> bool:
        """Whether there are spec files (acceptance tests) and none of the report's failing tests is in one:
        the code does what the request states, and a failing test elsewhere is the suspect."""
        return bool(self.spec) and not any(f.test_id.split("::", 1)[0] in self.spec for f in report.failures)
