"""clean_interfaces: what a looping or fenced Markdown reply is reduced to."""

from __future__ import annotations

from greenloop.agent.generate.interfaces import clean_interfaces, count_modules


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
