"""One record per language, read from its template folder: files, fences, tests, built-in modules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from greenloop_sandbox import SandboxError, detect_template, load_template, template_names
from greenloop_sandbox.languages import languages, load_language, owner_of, source_suffixes


def test_every_template_has_its_language() -> None:
    assert [lang.name for lang in languages()] == ["rust", "node", "python"]  # by detect_rank
    for name in template_names():
        language = load_template(name).language
        assert language == load_language(name) and language.name == name
        assert set(language.fences.values()) <= set(language.suffixes)  # a fence names the language's own code
    assert [load_language(n).fence for n in ("python", "node", "rust")] == ["python", "javascript", "rust"]


def test_a_path_belongs_to_the_language_of_its_suffix_or_manifest() -> None:
    assert [getattr(owner_of(p), "name", None) for p in ("pkg/a.py", "src/x.tsx", "Cargo.toml", "cargo.lock",
                                                         "package.json", "README.md", "data.json")] == [
        "python", "node", "rust", "rust", "node", None, None]
    assert {".py", ".pyi", ".js", ".mjs", ".ts", ".tsx", ".rs"} <= source_suffixes()
    assert ".toml" not in source_suffixes()


def test_a_templates_language_table_is_not_part_of_its_image_hash() -> None:
    python = load_template("python")
    other = replace(python, language=replace(python.language, test_globs=("x/*",), fences={"py": ".py"}))
    assert other.recipe_hash == python.recipe_hash  # editing the [language] table rebuilds no image


def test_an_unknown_language_lists_the_known_ones() -> None:
    with pytest.raises(SandboxError, match="known templates: node, python, rust"):
        load_language("cobol")


@pytest.mark.parametrize(("files", "expected"), [
    ({"Cargo.lock": b"", "x.py": b""}, "rust"),  # a manifest beats source files
    ({"pyproject.toml": b"", "package.json": b""}, "node"),  # several manifests: the lowest rank's
    ({"a.py": b"", "b.py": b"", "c.js": b""}, "python"),  # no manifest: the most source files
    ({"app/main.tsx": b""}, "node"),
    ({"a.py": b"", "b.js": b""}, "python"),  # a tie: python, as before the records
])
def test_detect_template_reads_the_languages(files: dict[str, bytes], expected: str) -> None:
    assert detect_template(files) == expected
