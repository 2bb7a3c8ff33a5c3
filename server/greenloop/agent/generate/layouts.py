"""Project layouts per sandbox template: a language record's layout facts and the code that writes its manifests."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from greenloop.errors import GreenloopError
from greenloop_sandbox.languages import Language, load_language, owner_of
from greenloop_sandbox.templates import load_template

# (manifest path, project name, packages) -> text
ManifestRenderer = Callable[[str, str, list[str]], str]
# (test path, module path, crate name) -> (what an import of that module looks like, how to write one)
ImportRule = Callable[[str, str, str], tuple[re.Pattern[str], str]]


@dataclass(frozen=True)
class Layout:
    """What one template means for a generated project (its language record's layout, compiled)."""

    name: str
    language: str
    fence: str  # the code fence tag of its source files
    suffixes: tuple[str, ...]  # its source files' suffixes
    test_runner: str
    guidance: str  # layout rules for the prompts
    test_rule: str  # how test files are named, for the file-list prompt
    managed: tuple[str, ...]  # manifests greenloop writes itself (from the plan's packages)
    test_pattern: re.Pattern[str]
    render_manifest: ManifestRenderer
    test_path: str  # where a test file goes when the plan has none ({name}: the crate name)
    test_case: re.Pattern[str]  # a test the runner collects, in a test file's text
    test_case_hint: str  # how to write one, for the repair request
    module_import: ImportRule
    required_any: tuple[str, ...] = ()  # the plan must contain one of these paths
    test_name: re.Pattern[str] | None = None  # a function or class name the runner collects as a test
    test_helpers: tuple[str, ...] = ()  # test-file names that need no test case (`conftest.py`)

    @property
    def provided(self) -> frozenset[str]:
        """Names that are no package to install: the sandbox template's tools and built-in modules."""
        return load_template(self.name).provided

    def owner_of(self, path: str) -> str | None:
        """The template a path belongs to, None for neutral files (docs, data)."""
        owner = owner_of(path)
        return owner.name if owner else None

    def contradicts(self, path: str) -> str | None:
        """The other template a path needs, None when it fits this one."""
        owner = self.owner_of(path)
        return owner if owner not in (None, self.name) else None

    def is_test(self, path: str) -> bool:
        return bool(self.test_pattern.search(path))

    def is_source(self, path: str) -> bool:
        """A source file of the template's language (by its suffix): not a test, not a manifest greenloop writes."""
        suffix = PurePosixPath(path).suffix.lower()
        return suffix in self.suffixes and not self.is_test(path) and path not in self.managed

    def has_test_case(self, path: str, text: str) -> bool:
        """Whether a test file's text holds a test (helpers such as conftest.py need none)."""
        return PurePosixPath(path).name in self.test_helpers or bool(self.test_case.search(text))

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


def _layout(language: Language, render_manifest: ManifestRenderer, module_import: ImportRule) -> Layout:
    facts = language.layout
    if facts is None:
        raise GreenloopError(f"The {language.name} template has no project layout; it cannot be generated.")
    return Layout(
        name=language.name,
        language=facts.title,
        fence=language.fence,
        suffixes=language.suffixes,
        test_runner=facts.test_runner,
        guidance=facts.guidance,
        test_rule=facts.test_rule,
        managed=facts.managed,
        test_pattern=re.compile(facts.test_pattern, re.M),
        render_manifest=render_manifest,
        test_path=facts.test_path,
        test_case=re.compile(facts.test_case, re.M),
        test_case_hint=facts.test_case_hint,
        module_import=module_import,
        required_any=facts.required_any,
        test_name=re.compile(facts.test_name) if facts.test_name else None,
        test_helpers=facts.test_helpers,
    )


# The templates projects are generated in, with the code half of their layouts: the manifests
# greenloop writes and what importing a module looks like. The facts are the language records'.
_CODE: dict[str, tuple[ManifestRenderer, ImportRule]] = {
    "python": (_python_manifest, _python_import),
    "node": (_node_manifest, _node_import),
    "rust": (_rust_manifest, _rust_import),
}
LAYOUTS = {name: _layout(load_language(name), *code) for name, code in _CODE.items()}
PYTHON, NODE, RUST = LAYOUTS["python"], LAYOUTS["node"], LAYOUTS["rust"]


def get_layout(template: str) -> Layout:
    """The layout of a sandbox template; GreenloopError naming the known ones."""
    try:
        return LAYOUTS[template]
    except KeyError:
        known = ", ".join(LAYOUTS)
        raise GreenloopError(f"Unknown template {template!r}; use one of: {known}.") from None
