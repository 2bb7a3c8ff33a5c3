"""What a failing test says about the code under test: its module, the names it calls, their specificity.

- The module under test: the file the test file's name points at
  (`tests/rules/test_git_push.py` -> `rules/git_push.py`, `foo.test.ts` ->
  `foo.ts`), and the modules the test file imports.
- The names the failing test uses: called (strong) or only referenced, and
  those on the line the failure stopped at (pytest's `>` lines).
- Specificity: an IDF over the test files that name a definition, so a shared
  type or logger that every test touches is weak evidence for any one failure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from greenloop.retrieval.graph import module_name
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.model import Definition, Frame

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FAILING_LINE = re.compile(r"^>\s+(?P<code>.*)$", re.M)  # pytest marks the line it stopped at with ">"
_MESSAGE_LINE = re.compile(r"^E\s+(?P<text>.*)$", re.M)  # pytest's error lines
_TEST_AFFIXES = re.compile(r"^(?:tests?_)|(?:_tests?)$", re.I)
_MAX_HOP_TARGETS = 8  # a name defined in more places is not followed a hop further
_SPEC_SUFFIX = re.compile(r"\.(?:test|spec)$", re.I)


def is_test_definition(definition: Definition) -> bool:
    """Test code: in a test file, in a Rust `tests` module, or named test_*."""
    if is_test_path(definition.path):
        return True
    head = definition.symbol.split(".", 1)[0]
    return head in ("tests", "test") or definition.name.startswith("test_")


def tested_stem(path: str) -> str:
    """The module a test file is named after: "tests/test_git_push.py" -> "git_push", "a.test.ts" -> "a"."""
    name = PurePosixPath(path).name
    stem = _SPEC_SUFFIX.sub("", name.rsplit(".", 1)[0]) if "." in name else name
    return _TEST_AFFIXES.sub("", stem)


class Specificity:
    """IDF of a name over the test files that reach it (1.0: at most one test file does).

    A test file reaches the names its test code uses and, one hop on, the
    names those definitions use: the shared type a feature module calls is
    reached by every test of every feature.
    """

    def __init__(self, index: RepoIndex) -> None:
        self.reach: dict[str, set[str]] = {}
        self.module_reach: dict[str, set[str]] = {}  # module name -> test files importing it
        test_files = 0
        for path in index.paths:
            symbols = index.symbols(path)
            if symbols is None or symbols.language is None:
                continue
            definitions = [d for d in symbols.definitions if is_test_definition(d)]
            if not definitions and not is_test_path(path):
                continue
            test_files += 1
            for module in symbols.imports:
                self.module_reach.setdefault(module.lower(), set()).add(path)
            names = set(symbols.module_refs) if is_test_path(path) else set()
            for definition in definitions:
                names.update(definition.refs)
            reached = set(names)
            for name in names:
                targets = index.named(name)
                if len(targets) <= _MAX_HOP_TARGETS:
                    for target in targets:
                        if not is_test_definition(target):
                            reached.update(target.refs)
            for name in reached:
                self.reach.setdefault(name, set()).add(path)
        self.test_files = test_files

    def reached_by(self, name: str) -> int:
        """How many test files reach `name`."""
        return len(self.reach.get(name, ()))

    def of(self, name: str) -> float:
        return self._idf(self.reached_by(name))

    def of_module(self, module: str) -> float:
        """IDF over the test files that import a module (by its import name)."""
        return self._idf(len(self.module_reach.get(module.lower(), ())))

    def _idf(self, reached: int) -> float:
        if reached <= 1 or self.test_files <= 1:
            return 1.0
        return math.log((self.test_files + 1) / reached) / math.log(self.test_files + 1)


@dataclass
class TestUse:
    """How strongly the failing test(s) point at each name, and at which files."""

    names: dict[str, float] = field(default_factory=dict)  # name -> 1.0 called, 0.5 referenced
    failing_line: set[str] = field(default_factory=set)  # names on the line the failure stopped at
    imported: set[str] = field(default_factory=set)  # names the test files import explicitly
    message: set[str] = field(default_factory=set)  # identifiers in the error message
    modules: dict[str, float] = field(default_factory=dict)  # path -> 1.0 by file name, 0.5 imported


def test_use(
    index: RepoIndex, tests: list[Definition], text: str, test_files: Collection[str] = (), failing_line: str = ""
) -> TestUse:
    """Evidence from the failing tests' code (and their nested helpers), their files and the failure text.

    `failing_line` is the source line the test stopped at, for runners that
    do not print it (pytest marks it with ">" in `text`).
    """
    use = TestUse()
    for body in _with_nested(index, tests):
        for name in body.refs:
            use.names[name] = max(use.names.get(name, 0.0), 1.0 if name in body.calls else 0.5)
    for match in _FAILING_LINE.finditer(text):
        use.failing_line.update(_IDENT.findall(match["code"]))
    use.failing_line.update(_IDENT.findall(failing_line))
    messages = [m["text"] for m in _MESSAGE_LINE.finditer(text)]
    use.message.update(_IDENT.findall("\n".join(messages) if messages else text))
    for path in {t.path for t in tests} | set(test_files):
        symbols = index.symbols(path)
        if symbols is None:
            continue
        use.imported.update(symbols.module_refs)
        for module, weight in modules_under_test(index, path).items():
            use.modules[module] = max(use.modules.get(module, 0.0), weight)
    return use


def _with_nested(index: RepoIndex, tests: list[Definition]) -> list[Definition]:
    out = list(tests)
    for test in tests:
        out.extend(
            d for d in index.definitions(test.path)
            if d.parent is not None and test.start_line < d.start_line <= test.end_line
        )
    return out


def modules_under_test(index: RepoIndex, test_path: str) -> dict[str, float]:
    """Non-test files a test file is about: named like it (1.0) or imported by it (0.5)."""
    stem = tested_stem(test_path).lower()
    symbols = index.symbols(test_path)
    imports = {part.lower() for part in symbols.imports} if symbols else set()
    found: dict[str, float] = {}
    if not is_test_path(test_path):  # tests inside the module (Rust `mod tests`): the file itself
        found[test_path] = 1.0
    for path in index.paths:
        if is_test_path(path):
            continue
        name = module_name(path).lower()
        if name == stem and stem:
            found[path] = 1.0
        elif name in imports:
            found.setdefault(path, 0.5)
    return found


def tests_named(
    index: RepoIndex, test_ids: str, file: str | None = None, near: Collection[str] = ()
) -> list[Definition]:
    """Test definitions named by runner test ids ("tests/t.py::test_x", "tests::it_works", ...).

    Candidates in `file`, the id's own path or the `near` files (test files in the
    traceback) win; when `near` is given, a same-named test elsewhere is ignored.
    """
    found: dict[str, Definition] = {}
    for test_id in test_ids.split():
        name = re.split(r"::|\.| > |/", test_id.split("[", 1)[0])[-1].strip()
        candidates = [d for d in index.named(name) if is_test_definition(d)] if name else []
        files = {f for f in (file, test_id.split("::", 1)[0] if "::" in test_id else None) if f} | set(near)
        in_file = [d for d in candidates if d.path in files]
        for definition in in_file or ([] if near else candidates[:3]):
            found[definition.key] = definition
    return list(found.values())


def failing_tests(index: RepoIndex, test_id: str, file: str | None, frames: list[Frame]) -> list[Definition]:
    """The definitions of the failing test(s), found by name and by frames in test code."""
    near = {f.path for f in frames if is_test_path(f.path)}
    found = {d.key: d for d in tests_named(index, test_id, file, near)}
    for frame in frames:
        definition = index.enclosing(frame.path, frame.line)
        if definition is not None and is_test_definition(definition):
            found.setdefault(definition.key, definition)
    return list(found.values())
