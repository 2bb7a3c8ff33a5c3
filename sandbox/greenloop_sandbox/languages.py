"""One record per language, read from the `[language]` table of its template's `template.toml`.

The record is what is known of a language besides its environment: which files are its code and
its tests, how replies fence its code, which modules need no install, how a generated project is
laid out. Adding a language is adding a template folder. The table is not part of the image hash
(`EnvTemplate.recipe_hash`): editing it rebuilds no image.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.values import SandboxError

TEMPLATES_DIR = Path(__file__).with_name("templates")
DATA_DIR = Path(__file__).with_name("data")  # data files a template's `[language]` table names (package_map)


@dataclass(frozen=True)
class ProjectLayout:
    """How a generated project of the language is laid out and tested; patterns are regexes (re.M)."""

    title: str  # how prompts name the language ("Python 3")
    test_runner: str
    guidance: str  # layout rules for the prompts
    test_rule: str  # how test files are named, for the file-list prompt
    managed: tuple[str, ...] = ()  # manifests greenloop writes itself (from the plan's packages)
    test_path: str = ""  # where a test file goes when the plan has none ({name}: the crate name)
    test_pattern: str = ""  # a test file's path
    test_case: str = ""  # a test the runner collects, in a test file's text
    test_case_hint: str = ""  # how to write one, for the repair request
    test_name: str = ""  # a function or class name the runner collects as a test ("": none)
    test_helpers: tuple[str, ...] = ()  # test-file names that hold no test and need none (`conftest.py`)
    required_any: tuple[str, ...] = ()  # the plan must contain one of these paths


@dataclass(frozen=True)
class Language:
    """One language: its files, code fences, test paths, built-in modules and project layout."""

    name: str  # its template's name ("python", "node", "rust")
    grammars: Mapping[str, str]  # source-file suffix -> tree-sitter grammar name
    fences: Mapping[str, str]  # code-fence name -> suffix of the code under it; the first is the one written
    manifests: tuple[str, ...]  # project files that make a workspace this language's (`Cargo.toml`)
    detect_rank: int  # a workspace with several languages' manifests is the one of the lowest rank
    test_globs: tuple[str, ...] = ()  # where its tests are (fnmatch on workspace paths): the spec the fix keeps
    builtin_modules: frozenset[str] = frozenset()  # modules every environment has: no package to install
    missing_module: str = ""  # regex: a test run saying a module is not installed (group 1: its name)
    packages: Mapping[str, str] = field(default_factory=dict)  # import name -> package name (package_map + table)
    missing_fixture: str = ""  # regex: a test run saying a test fixture does not exist (group 1: its name)
    fixtures: Mapping[str, str] = field(default_factory=dict)  # fixture name -> the test-runner plugin giving it
    layout: ProjectLayout | None = None  # None: no projects are generated in it
    removed_apis: Mapping[str, str] = field(default_factory=dict)  # "inspect.getargspec" -> the release without it
    test_tool: str = ""  # the test runner's package ("pytest"): the environment step may pick its version
    test_tool_error: str = ""  # regex: the test runner refusing the project's test code
    unknown_option: str = ""  # regex: the test runner refusing an option of the project's configuration (group 1)
    options: Mapping[str, str] = field(default_factory=dict)  # a plugin's option ("--cov") -> the plugin giving it

    @property
    def suffixes(self) -> tuple[str, ...]:
        return tuple(self.grammars)

    @property
    def fence(self) -> str:
        """The fence name greenloop writes around this language's code."""
        return next(iter(self.fences), self.name)

    def owns(self, path: str) -> bool:
        """Whether `path` is this language's: one of its manifests (any case) or a source file."""
        p = PurePosixPath(path)
        return p.name.lower() in {m.lower() for m in self.manifests} or p.suffix.lower() in self.grammars

    def package_for(self, module: str) -> str:
        """The package that provides the module imported as `module` (the module's own name when unknown,
        or when the table only spells it otherwise: `requests` -> `Requests`)."""
        found = self.packages.get(module, module)
        return module if normal_name(found) == normal_name(module) else found

    def well_known(self, package: str) -> bool:
        """Whether `package` is one the language's tables name (a mapped import, a fixture's plugin)."""
        return normal_name(package.split("[")[0]) in self._known

    @cached_property
    def _known(self) -> frozenset[str]:
        return frozenset(normal_name(p) for p in (*self.packages.values(), *self.fixtures.values()))


def template_names() -> list[str]:
    return sorted(p.parent.name for p in TEMPLATES_DIR.glob("*/template.toml"))


@cache
def load_language(name: str) -> Language:
    """The language of the template called `name`; SandboxError listing the known ones otherwise."""
    known = template_names()
    if name not in known:
        raise SandboxError(f"Unknown sandbox template {name!r}; known templates: {', '.join(known)}.")
    path = TEMPLATES_DIR / name / "template.toml"
    try:
        return _language(name, tomllib.loads(path.read_text(encoding="utf-8"))["language"])
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise SandboxError(f"Template {name!r} in {path.parent} is broken ({exc!r}); reinstall greenloop.") from exc


@cache
def languages() -> tuple[Language, ...]:
    """Every template's language, lowest `detect_rank` first."""
    return tuple(sorted((load_language(n) for n in template_names()), key=lambda lang: (lang.detect_rank, lang.name)))


def owner_of(path: str) -> Language | None:
    """The language a path belongs to by its name or suffix, None for neutral files (docs, data)."""
    return next((lang for lang in languages() if lang.owns(path)), None)


def source_suffixes() -> frozenset[str]:
    """The suffixes of every language's source files."""
    return frozenset(s for lang in languages() for s in lang.suffixes)


def fence_suffixes() -> dict[str, str]:
    """Code-fence name -> the suffix of the code under it, over every language (`py` -> `.py`)."""
    return {fence: suffix for lang in languages() for fence, suffix in lang.fences.items()}


def _language(name: str, data: Mapping[str, Any]) -> Language:
    builtins = frozenset(data.get("builtin_modules", []))
    if data.get("python_stdlib", False):  # the running Python's standard library (the image's is the same)
        builtins |= frozenset(sys.stdlib_module_names)
    layout = data.get("layout")
    return Language(
        name=name,
        grammars={str(k): str(v) for k, v in data["grammars"].items()},
        fences={str(k): str(v) for k, v in data["fences"].items()},
        manifests=tuple(data["manifests"]),
        detect_rank=int(data["detect_rank"]),
        test_globs=tuple(data.get("test_globs", [])),
        builtin_modules=builtins,
        missing_module=data.get("missing_module", ""),
        packages={**_package_map(data.get("package_map", "")),
                  **{str(k): str(v) for k, v in data.get("packages", {}).items()}},
        missing_fixture=data.get("missing_fixture", ""),
        fixtures={str(k): str(v) for k, v in data.get("fixtures", {}).items()},
        layout=None if layout is None else _layout(layout),
        removed_apis=_removed_apis(data.get("removed_apis", "")),
        test_tool=str(data.get("test_tool", "")),
        test_tool_error=str(data.get("test_tool_error", "")),
        unknown_option=str(data.get("unknown_option", "")),
        options={str(k): str(v) for k, v in data.get("options", {}).items()},
    )


def _removed_apis(filename: str) -> dict[str, str]:
    """A data file's `[removed]` table: a name a release removed -> that release."""
    if not filename:
        return {}
    data = tomllib.loads((DATA_DIR / filename).read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.get("removed", {}).items()}


def _package_map(filename: str) -> dict[str, str]:
    """`import:distribution` lines of a file in DATA_DIR ({} for no file name)."""
    if not filename:
        return {}
    rows = (line.strip().split(":", 1) for line in (DATA_DIR / filename).read_text(encoding="utf-8").splitlines())
    return {row[0]: row[1] for row in rows if len(row) == 2 and row[0] and row[1]}


def _layout(data: Mapping[str, Any]) -> ProjectLayout:
    return ProjectLayout(
        title=data["title"],
        test_runner=data["test_runner"],
        guidance=data["guidance"],
        test_rule=data["test_rule"],
        managed=tuple(data.get("managed", [])),
        test_path=data.get("test_path", ""),
        test_pattern=data.get("test_pattern", ""),
        test_case=data.get("test_case", ""),
        test_case_hint=data.get("test_case_hint", ""),
        test_name=data.get("test_name", ""),
        test_helpers=tuple(data.get("test_helpers", [])),
        required_any=tuple(data.get("required_any", [])),
    )
