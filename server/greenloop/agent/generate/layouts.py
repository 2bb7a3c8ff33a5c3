"""Project layouts per sandbox template: file kinds, test conventions and the manifests greenloop writes."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from greenloop.errors import GreenloopError
from greenloop_sandbox.templates import load_template

# Which template a source suffix or manifest name belongs to (for "the plan contradicts the template").
_SUFFIX_OWNER = {
    ".py": "python",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "node",
    ".rs": "rust",
}
_MANIFEST_OWNER = {
    "pyproject.toml": "python",
    "setup.py": "python",
    "setup.cfg": "python",
    "requirements.txt": "python",
    "package.json": "node",
    "package-lock.json": "node",
    "cargo.toml": "rust",
    "cargo.lock": "rust",
}


@dataclass(frozen=True)
class Layout:
    """What one template means for a generated project."""

    name: str
    language: str
    fence: str  # the code fence tag of its source files
    test_runner: str
    guidance: str  # layout rules for the prompts
    managed: tuple[str, ...]  # manifests greenloop writes itself (from the plan's packages)
    test_pattern: re.Pattern[str]
    render_manifest: Callable[[str, str, list[str]], str]  # (manifest path, project name, packages) -> text
    test_path: str  # where a test file goes when the plan has none ({name}: the crate name)
    test_case: re.Pattern[str]  # a test the runner collects, in a test file's text
    test_case_hint: str  # how to write one, for the repair request
    # (test path, module path, crate name) -> (what an import of that module looks like, how to write one)
    module_import: Callable[[str, str, str], tuple[re.Pattern[str], str]]
    required_any: tuple[str, ...] = ()  # the plan must contain one of these paths
    test_name: re.Pattern[str] | None = None  # a function or class name the runner collects as a test

    @property
    def provided(self) -> frozenset[str]:
        """Names that are no package to install: the sandbox template's tools and built-in modules."""
        return load_template(self.name).provided

    def owner_of(self, path: str) -> str | None:
        """The template a path belongs to, None for neutral files (docs, data)."""
        p = PurePosixPath(path)
        return _MANIFEST_OWNER.get(p.name.lower()) or _SUFFIX_OWNER.get(p.suffix.lower())

    def contradicts(self, path: str) -> str | None:
        """The other template a path needs, None when it fits this one."""
        owner = self.owner_of(path)
        return owner if owner not in (None, self.name) else None

    def is_test(self, path: str) -> bool:
        return bool(self.test_pattern.search(path))

    def is_source(self, path: str) -> bool:
        """A source file of the template's language: not a test, not a manifest greenloop writes."""
        return self.owner_of(path) == self.name and not self.is_test(path) and path not in self.managed

    def has_test_case(self, path: str, text: str) -> bool:
        """Whether a test file's text holds a test (helpers such as conftest.py need none)."""
        return PurePosixPath(path).name == "conftest.py" or bool(self.test_case.search(text))

    def is_test_name(self, name: str) -> bool:
        return bool(self.test_name and self.test_name.match(name))

    def fence_for(self, path: str) -> str:
        suffix = PurePosixPath(path).suffix.lower()
        return {".toml": "toml", ".json": "json", ".md": "markdown", ".txt": "text"}.get(suffix, self.fence)


def _python_import(test_path: str, module_path: str, crate: str) -> tuple[re.Pattern[str], str]:
    parts = list(PurePosixPath(module_path).with_suffix("").parts)
    if len(parts) > 1 and parts[-1] == "__init__":
        parts.pop()
    top = re.escape(parts[0])
    return re.compile(rf"^[ \t]*(from|import)[ \t]+{top}\b", re.M), f"from {'.'.join(parts)} import ..."


def _node_import(test_path: str, module_path: str, crate: str) -> tuple[re.Pattern[str], str]:
    module = PurePosixPath(module_path)
    target = posixpath.relpath(str(module.with_suffix("")), posixpath.dirname(test_path) or ".")
    target = target if target.startswith(".") else f"./{target}"
    names = [module.stem, module.parent.name] if module.stem == "index" else [module.stem]
    alternatives = "|".join(re.escape(n) for n in names if n)
    pattern = re.compile(rf"""(require\(|\bfrom)\s*['"][^'"]*\b({alternatives})(\.[cm]?js)?/?['"]""")
    return pattern, f"const {{ ... }} = require('{target}');"


def _rust_import(test_path: str, module_path: str, crate: str) -> tuple[re.Pattern[str], str]:
    return re.compile(rf"\b{re.escape(crate)}::"), f"use {crate}::...;"


def crate_name(name: str) -> str:
    """A project name usable as a package / crate name: lowercase, [a-z0-9_]."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "app"
    return slug if slug[0].isalpha() else f"app_{slug}"


def _python_manifest(path: str, name: str, packages: list[str]) -> str:
    if path == "requirements.txt":
        return "".join(f"{p}\n" for p in packages)
    deps = "".join(f"    {json.dumps(p)},\n" for p in packages)
    return (
        "[project]\n"
        f'name = "{crate_name(name).replace("_", "-")}"\n'
        'version = "0.1.0"\n'
        'requires-python = ">=3.10"\n'
        f"dependencies = [\n{deps}]\n\n"
        "[tool.pytest.ini_options]\n"
        'pythonpath = ["."]\n'
        'testpaths = ["."]\n'
    )


def _node_manifest(path: str, name: str, packages: list[str]) -> str:
    deps = {}
    for spec in packages:
        pkg, _, version = spec.rpartition("@") if spec.rfind("@") > 0 else (spec, "", "")
        deps[pkg] = version or "*"
    manifest: dict[str, object] = {
        "name": crate_name(name).replace("_", "-"),
        "version": "0.1.0",
        "private": True,
        "type": "commonjs",
        "scripts": {"test": "node --test"},
    }
    if deps:
        manifest["dependencies"] = deps
    return json.dumps(manifest, indent=2) + "\n"


def _rust_manifest(path: str, name: str, packages: list[str]) -> str:
    lines = [f'{spec.split("@")[0]} = "{spec.split("@")[1] if "@" in spec else "*"}"' for spec in packages]
    deps = "".join(f"{line}\n" for line in lines)
    return (
        "[package]\n"
        f'name = "{crate_name(name)}"\n'
        'version = "0.1.0"\n'
        'edition = "2021"\n\n'
        f"[dependencies]\n{deps}"
    )


PYTHON = Layout(
    name="python",
    language="Python 3",
    fence="python",
    test_runner="pytest",
    guidance=(
        "Python 3.11 project tested with pytest. Put the code in a package folder named after the "
        "project (`<package>/__init__.py`, `<package>/<module>.py`) and the tests in `tests/test_<module>.py`, "
        "importing the package absolutely (`from <package>.<module> import <name>`). Tests are plain "
        "pytest functions with `assert`. Prefer the standard library. greenloop writes `pyproject.toml` itself."
    ),
    managed=("pyproject.toml", "requirements.txt"),
    test_pattern=re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$|(^|/)conftest\.py$"),
    render_manifest=_python_manifest,
    test_path="tests/test_{name}.py",
    test_case=re.compile(r"^[ \t]*(async[ \t]+)?def[ \t]+test\w*[ \t]*\(", re.M),
    test_case_hint="pytest functions named `test_...` that `assert`",
    module_import=_python_import,
    test_name=re.compile(r"test|Test"),
)

NODE = Layout(
    name="node",
    language="JavaScript (Node.js 18, CommonJS)",
    fence="javascript",
    test_runner="node --test",
    guidance=(
        "Node.js 18 project in plain JavaScript with CommonJS modules (`require`, `module.exports`), no "
        "TypeScript, no build step. Put the code in `src/<module>.js` and the tests in `test/<module>.test.js` "
        "using the built-in runner: `const test = require('node:test'); const assert = require('node:assert');`. "
        "Prefer Node's built-in modules. greenloop writes `package.json` itself."
    ),
    managed=("package.json",),
    test_pattern=re.compile(r"(^|/)test/.*\.[cm]?js$|\.test\.[cm]?js$|(^|/)test-[^/]*\.[cm]?js$"),
    render_manifest=_node_manifest,
    test_path="test/{name}.test.js",
    test_case=re.compile(r"\b(test|it)(\.\w+)?[ \t]*\("),
    test_case_hint="`test('...', () => { ... })` cases from `node:test` that use `assert`",
    module_import=_node_import,
)

RUST = Layout(
    name="rust",
    language="Rust (2021 edition)",
    fence="rust",
    test_runner="cargo test",
    guidance=(
        "Rust library crate tested with `cargo test`. `src/lib.rs` declares the modules (`pub mod parser;`) "
        "and each module lives in `src/<module>.rs`; integration tests live in `tests/<name>.rs` and use the "
        "crate by its name (the project name in snake_case, `use <crate_name>::<name>;`). "
        "Use only the standard library unless a crate is really needed. greenloop writes `Cargo.toml` itself."
    ),
    managed=("Cargo.toml",),
    test_pattern=re.compile(r"(^|/)tests/[^/]*\.rs$"),
    render_manifest=_rust_manifest,
    test_path="tests/{name}.rs",
    test_case=re.compile(r"#\[test\]"),
    test_case_hint="`#[test]` functions that `assert!`",
    module_import=_rust_import,
    required_any=("src/lib.rs", "src/main.rs"),
)

LAYOUTS = {layout.name: layout for layout in (PYTHON, NODE, RUST)}


def get_layout(template: str) -> Layout:
    """The layout of a sandbox template; GreenloopError naming the known ones."""
    try:
        return LAYOUTS[template]
    except KeyError:
        known = ", ".join(LAYOUTS)
        raise GreenloopError(f"Unknown template {template!r}; use one of: {known}.") from None
