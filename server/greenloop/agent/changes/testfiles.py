"""Which workspace files are tests: the one rule the fix loop uses to keep the spec read-only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from greenloop.retrieval.index import is_test_path

READ_ONLY_REASON = (
    "{path} is a test file, and the tests are the specification: change the code under test so that "
    "they pass, not the tests (loop.edit_tests lets fix change tests)"
)


@dataclass(frozen=True)
class TestFiles:
    """Test files by retrieval's naming rule, the template's `test_globs` and `loop.test_paths`.

    `writable` opts out of the protection (`loop.edit_tests`; generation for the tests it wrote).
    """

    __test__ = False  # not a pytest class
    globs: tuple[str, ...] = ()
    writable: bool = False

    @classmethod
    def of(cls, template_globs: Iterable[str], extra: Iterable[str], *, writable: bool) -> TestFiles:
        return cls(globs=tuple(dict.fromkeys([*template_globs, *extra])), writable=writable)

    def is_test(self, path: str) -> bool:
        return is_test_path(path) or any(fnmatchcase(path, g) for g in self.globs)

    def refusal(self, path: str) -> str | None:
        """Why an action on `path` is refused (None: it is allowed)."""
        if self.writable or not self.is_test(path):
            return None
        return READ_ONLY_REASON.format(path=path)
