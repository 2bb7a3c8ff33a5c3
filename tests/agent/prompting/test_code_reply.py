"""Code out of replies: fences, bare code, prose and empty replies."""

from __future__ import annotations

from greenloop.agent.prompting.code_reply import extract_code


def test_the_block_naming_the_file_wins_over_a_larger_one() -> None:
    reply = (
        "Here is the helper:\n```python\n" + "x = 1\n" * 20 + "```\n"
        "And `wc/core.py`:\n```python\ndef count(text):\n    return len(text.split())\n```\n"
    )
    code = extract_code(reply, "wc/core.py")
    assert code.how == "fenced" and code.text == "def count(text):\n    return len(text.split())\n"


def test_the_largest_block_without_names_and_indented_fences() -> None:
    reply = "  ```js\n  const a = 1;\n  module.exports = { a };\n  ```\n\n```\nx\n```\n"
    code = extract_code(reply, "src/a.js")
    assert code.text == "const a = 1;\nmodule.exports = { a };\n"


def test_bare_code_is_accepted_and_a_cut_off_fence_is_dropped() -> None:
    assert extract_code("import os\n\nprint(os.sep)\n", "a.py").how == "bare"
    cut = extract_code("```rust\npub fn one() -> i32 {\n    1\n}\n", "src/lib.rs")
    assert cut.how == "bare" and cut.text.startswith("pub fn one()")


def test_prose_and_empty_replies_are_flagged() -> None:
    prose = extract_code("Sure! The module should count the words and return them sorted.", "wc/core.py")
    assert prose.problem.endswith("prose, not the file's code")
    explanation = extract_code(
        "The function splits the text on whitespace and counts.\nIt returns a dict of counts per word.",
        "a.py",
    )
    assert explanation.problem
    assert extract_code("  \n", "a.py").problem == "the reply for a.py was empty"
    # docs may be prose
    assert not extract_code("This project counts words.", "README.md").problem


def test_a_block_holding_several_files_gives_the_part_for_the_file_asked() -> None:
    # Qwen2.5-Coder 0.5B, asked for slug.py, sent the module and its tests in one block
    planned = ["slug.py", "tests/test_slug.py"]
    module = "import re\n\n\ndef slugify(title: str) -> str:\n    return re.sub(r'\\W+', '-', title)\n"
    tests = "from slug import slugify\n\n\ndef test_slugify():\n    assert slugify('a b') == 'a-b'\n"
    both = f"```python\n# slug.py\n\n{module}\n# tests/test_slug.py\n\n{tests}```\n"
    assert extract_code(both, "slug.py", planned).text == module
    assert extract_code(both, "tests/test_slug.py", planned).text == tests
    # the file asked for second, under its full path; the other under a bare name
    reversed_ = f"```python\n# File: tests/test_slug.py\n{tests}\n// slug.py\n{module}```"
    assert extract_code(reversed_, "slug.py", planned).text == module
    # no comment for the file asked: the code before the first other file
    unnamed = f"```python\n{module}\n# tests/test_slug.py\n{tests}```"
    assert extract_code(unnamed, "slug.py", planned).text == module
    # bare replies split the same way
    assert extract_code(f"# slug.py\n{module}# tests/test_slug.py\n{tests}", "slug.py", planned).text == module


def test_comments_that_name_no_other_planned_file_do_not_split() -> None:
    text = "# slug.py\n# config.json\nimport json\n\n\ndef load():\n    return json.loads('{}')\n"
    assert extract_code(f"```python\n{text}```", "slug.py", ["slug.py", "tests/test_slug.py"]).text == text
    assert extract_code(f"```python\n{text}```", "slug.py").text == text  # no plan given: whole


def test_a_reply_headed_by_another_planned_file_is_flagged() -> None:
    # Qwen2.5-Coder 0.5B, asked for fizzbuzz.py, sent `# pyproject.toml` and a poetry manifest
    manifest = '```python\n# pyproject.toml\n\n[tool.poetry]\nname = "app"\n```\n'
    planned = ["fizzbuzz.py", "tests/test_fizzbuzz.py", "pyproject.toml"]
    assert extract_code(manifest, "fizzbuzz.py", planned).problem == (
        "it holds `pyproject.toml` (its first line names that file), not `fizzbuzz.py`"
    )
    # the same reply bare, and a file headed by its own name or by a file not in the plan, are fine
    assert extract_code(manifest.strip("`\npython"), "fizzbuzz.py", planned).problem
    assert not extract_code("# fizzbuzz.py\nN = 1\n", "fizzbuzz.py", planned).problem
    assert not extract_code("# notes.txt\nN = 1\n", "fizzbuzz.py", planned).problem
