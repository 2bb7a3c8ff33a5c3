"""A template's project layout is its language record's layout, compiled, plus the code that writes manifests."""

from __future__ import annotations

from greenloop.agent.generate.layouts import LAYOUTS, NODE, PYTHON, RUST
from greenloop_sandbox.languages import load_language


def test_layouts_are_the_language_records() -> None:
    assert list(LAYOUTS) == ["python", "node", "rust"]
    for layout in LAYOUTS.values():
        facts = load_language(layout.name).layout
        assert facts is not None and layout.guidance == facts.guidance and layout.test_rule == facts.test_rule
    assert PYTHON.is_test("tests/test_core.py") and NODE.is_test("test/core.test.js") and RUST.is_test("tests/a.rs")


def test_source_files_are_the_languages_own_by_suffix() -> None:
    assert PYTHON.is_source("wc/core.py") and NODE.is_source("src/app.tsx") and RUST.is_source("src/lib.rs")
    assert not PYTHON.is_source("setup.cfg") and not NODE.is_source("package-lock.json")  # manifests: no modules
    assert PYTHON.contradicts("src/app.js") == "node" and NODE.contradicts("Cargo.toml") == "rust"
    assert PYTHON.contradicts("README.md") is None
    assert PYTHON.has_test_case("tests/conftest.py", "import pytest\n")  # a helper needs no test
