"""clean_interfaces and outline_code_blocks: what the interfaces reply becomes, for every file and for tests."""

from __future__ import annotations

import ast
import re

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
    # cut off inside a block: the block is closed, so the outline for tests still takes it
    assert clean_interfaces("## a.py\n- `f() -> int`\n```python\ndef f(") == "## a.py\n- `f() -> int`\n```python\ndef f(\n```"


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


def test_code_keeps_its_repeated_lines_and_a_block_left_open_is_closed_above_the_next_heading() -> None:
    # Qwen2.5-Coder 1.5B's matrix interfaces (bench, 2026-11-26): a block per function, each opened
    # and never closed. Dropping each docstring's second `"""` as a repeat left them all unclosed;
    # matrix.py was written from it three times and never parsed, and its test saw no `multiply`.
    def block(name: str, body: str) -> str:
        return (f"## {name}\n```python\ndef {name}(a: list[int]) -> list[int]:\n    \"\"\"\n    {name.title()} a.\n\n"
                f"    Returns:\n    list[int]: the result.\n    \"\"\"\n    {body}\n    return a\n\n")

    reply = "```markdown\n## ops.py\n\n" + block("double", "a = [2 * x for x in a]") + block("clip", "a = a[:3]") + "```"
    cleaned = clean_interfaces(reply, PYTHON)
    blocks = [m.group("body") for m in re.finditer(r"^```python\n(?P<body>.*?)^```$", cleaned, re.M | re.S)]
    assert len(blocks) == 2 and all(ast.parse(b) for b in blocks)
    assert cleaned.count('    """') == 4 and cleaned.count("    return a") == 2
    assert cleaned.index("```\n\n## clip") < cleaned.index("## clip\n```python")  # closed above the next heading
    assert outline_code_blocks(cleaned, PYTHON).count("- `def ") == 2
    # a line repeated at once inside code is still a loop
    looped = "## a.py\n```python\ndef f() -> int:\n" + "    x = 1\n" * 30 + "    return x\n```"
    assert clean_interfaces(looped) == "## a.py\n```python\ndef f() -> int:\n    x = 1\n    return x\n```"
