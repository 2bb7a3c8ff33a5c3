"""clean_interfaces and outline_code_blocks: what the interfaces reply becomes, for every file and for tests."""

from __future__ import annotations

from greenloop.agent.generate.interfaces import (
    clean_interfaces,
    count_modules,
    has_content,
    outline_code_blocks,
)
from greenloop.agent.generate.layouts import NODE, PYTHON, RUST


def test_repeats_within_a_section_and_repeated_sections_are_dropped() -> None:
    reply = (
        "```md\n\n## pkg/a.py\n- `f() -> int`: one\n- `f() -> int`: one\n\n\n- `g() -> int`: two\n"
        "## pkg/b.py\n- `f() -> int`: one\n"  # the same line in another module is kept
        "## pkg/a.py\n- `h() -> int`: a looped section is dropped whole\n```"
    )
    assert clean_interfaces(reply) == (
        "## pkg/a.py\n- `f() -> int`: one\n\n- `g() -> int`: two\n## pkg/b.py\n- `f() -> int`: one"
    )
    assert count_modules(clean_interfaces(reply)) == 2


def test_a_sub_heading_under_each_function_is_not_a_repeat() -> None:
    # Qwen2.5-Coder 0.5B's roman.py: from_roman lost its parameters and return to to_roman's headings
    def function(name: str, param: str, returns: str) -> str:
        return f"### {name}\n\n#### Parameters:\n- {param}\n\n#### Returns:\n- {returns}\n\n"

    doc = "## roman.py\n\n" + function("to_roman(n: int) -> str", "`n`: 1 to 3999", "the numeral")
    doc += function("from_roman(s: str) -> int", "`s`: a numeral", "its value")
    assert clean_interfaces(doc) == doc.strip()
    # the same trail twice (a looped module section) still goes
    assert clean_interfaces(doc + doc) == doc.strip()


def test_only_path_headings_count_as_modules() -> None:
    # the note once read "Interfaces: 13 module(s)" for two modules and the model's sub-headings
    doc = "# Interfaces\n## `wc/core.py`\n### count_words\n- `count_words(text: str) -> int`\n## wc/cli.py\n## to_f\n## Data"
    assert count_modules(doc) == 2


def test_plain_text_is_kept_and_nothing_becomes_empty() -> None:
    assert clean_interfaces("  # calc.py\n- `add(a: int, b: int) -> int`  \n") == (
        "# calc.py\n- `add(a: int, b: int) -> int`"
    )
    assert clean_interfaces("```\n```") == "" and clean_interfaces("\n \n") == ""


def test_a_markdown_fence_around_fenced_examples_or_cut_off_is_unwrapped_and_code_blocks_kept() -> None:
    doc = "## wc.py\n- `count(text: str) -> int`\n```python\n>>> count('a b')\n2\n```"
    assert clean_interfaces(f"```markdown\n{doc}\n```") == doc
    assert clean_interfaces(f"```markdown\n{doc}\n- `more(") == f"{doc}\n- `more("  # cut off at the limit
    two_blocks = "```python\ndef f(): ...\n```\n## b.py\n```python\ndef g(): ...\n```"
    assert clean_interfaces(two_blocks) == two_blocks  # not one fence around the document


def test_empty_and_unclosed_fences_go_and_headings_alone_are_no_content() -> None:
    # Qwen2.5-Coder 0.5B looped on bare headings and lone fences; a stray fence made the rest of
    # every file prompt read as code, and the model answered a test file with a pyproject.toml
    looped = "```markdown\n## temperature.py\n\n## to_f\n```\n\n## to_c\n```\n\n## Data\n```\n## Temperature data\n```\n"
    cleaned = clean_interfaces(looped * 3)
    assert "```" not in cleaned and not has_content(cleaned)
    assert cleaned.startswith("## temperature.py")


def test_two_code_blocks_in_one_section_keep_all_their_fences() -> None:
    doc = "## calc.py\n```python\ndef add(a: int, b: int) -> int: ...\n```\nand\n```python\ndef sub(a: int, b: int) -> int: ...\n```"
    assert clean_interfaces(doc) == doc and has_content(doc)
    assert clean_interfaces("## a.py\n- `f() -> int`\n```python\ndef f(") == "## a.py\n- `f() -> int`\ndef f("


def test_sections_about_tests_or_manifests_are_dropped_with_their_sub_sections() -> None:
    # Qwen2.5-Coder 0.5B wrote whole test files (and a pyproject.toml) into the interfaces; every
    # later request copied them, and a copied test file with fixtures but no test was refused 3 times
    reply = (
        "## slug.py\n- `slugify(title: str) -> str`: lower case, hyphens\n"
        "## Tests\n```python\nimport pytest\n\n# a comment is not a heading\ndef test_slugify():\n"
        "    assert slugify('a b') == 'a-b'\n```\n"
        "## tests/test_slug.py\n```python\ndef test_slugify(): ...\n```\n"
        "## pyproject.toml\n```toml\n[tool.poetry]\n```\n"
        "## Data\n### Testing\n#### fizzbuzz_test.py\n- `assert fizzbuzz(3) == ['1', '2', 'Fizz']`\n"
        "### Slug\n- a `str` of at most 60 characters\n"
    )
    cleaned = clean_interfaces(reply, PYTHON)
    assert cleaned == (
        "## slug.py\n- `slugify(title: str) -> str`: lower case, hyphens\n"
        "## Data\n### Slug\n- a `str` of at most 60 characters"
    )
    assert "## Tests" in clean_interfaces(reply)  # without a layout nothing is dropped
    rust = clean_interfaces("## src/lib.rs\n- `pub fn add(a: i32, b: i32) -> i32`\n## Cargo.toml\n[package]\n", RUST)
    assert rust == "## src/lib.rs\n- `pub fn add(a: i32, b: i32) -> i32`"


def test_code_blocks_become_outlines_for_test_files_and_examples_stay() -> None:
    # the 0.5B model wrote the whole module into the interfaces; a test request showing it got it back
    doc = (
        "## stack.py\n```python\n# stack.py\n\nclass Stack:\n    def push(self, item):\n        self.items.append(item)\n\n"
        "    def pop(self):\n        if not self.items:\n            raise IndexError('empty')\n        return self.items.pop()\n```\n"
        "Example:\n```python\n>>> Stack().push(1)\n```\n```\ndef bare(x: int) -> int:\n    return x\n```"
    )
    assert outline_code_blocks(doc, PYTHON) == (
        "## stack.py\n- `class Stack`\n  - `def push(self, item)`\n  - `def pop(self)` (raises IndexError)\n"
        "Example:\n```python\n>>> Stack().push(1)\n```\n- `def bare(x: int) -> int`"  # an untagged block is the template's
    )
    js = "## src/a.js\n```javascript\nfunction add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n```"
    assert outline_code_blocks(js, NODE) == "## src/a.js\n- `function add(a, b)`"
