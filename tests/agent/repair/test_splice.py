"""Function replies spliced in with tree-sitter: the file's own lines as search text, its indentation and endings."""

from __future__ import annotations

import ast
import textwrap

import pytest

from greenloop.agent.changes.edits import apply_search_replace
from greenloop.agent.repair.region_edits import region_edits
from greenloop.agent.repair.rungs.blocks import parse_blocks
from greenloop.agent.repair.splice import SpliceError, Target, closed_blocks, code_blocks, splice

SOURCE = (
    "import os\n\n\n@cache\ndef mean(values):\n    return sum(values) / (len(values) + 1)\n\n\n"
    "class Stack:\n    def push(self, x):\n        self.items.insert(0, x)\n\n    def pop(self):\n        return 1\n"
)
MEAN = Target("stats.py", "mean", "function", 4, 6)
PUSH = Target("stats.py", "Stack.push", "method", 10, 11)


def applied(source: str, edits: list) -> str:
    for edit in edits:
        source = apply_search_replace(source, edit.search, edit.replace).text
    return source


def test_a_function_reply_replaces_the_definition_and_keeps_its_decorator() -> None:
    reply = "The divisor is off by one.\n```python\ndef mean(values):\n    return sum(values) / len(values)\n```"
    edits = splice(SOURCE, MEAN, reply)
    assert len(edits) == 1 and edits[0].search in SOURCE  # the search text is the file's own lines
    out = applied(SOURCE, edits)
    assert "@cache\ndef mean(values):\n    return sum(values) / len(values)\n" in out
    assert out.count("class Stack") == 1


def test_a_method_written_at_column_zero_or_inside_its_class_gets_the_methods_indentation() -> None:
    for reply in ("```python\ndef push(self, x):\n    self.items.append(x)\n```",
                  "```python\nclass Stack:\n    def push(self, x):\n        self.items.append(x)\n```"):
        out = applied(SOURCE, splice(SOURCE, PUSH, reply))
        assert "    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):" in out


def test_helpers_and_imports_come_along() -> None:
    reply = ("```python\nimport math\n\ndef _total(v):\n    return math.fsum(v)\n\n"
             "def mean(values):\n    return _total(values) / len(values)\n```")
    out = applied(SOURCE, splice(SOURCE, MEAN, reply))
    assert out.startswith("import os\nimport math\n")
    assert out.index("def _total") < out.index("def mean")


@pytest.mark.parametrize(("reply", "reason"), [
    ("", "empty"),
    ("The bug is the divisor.", "no code block, only prose"),
    ("```python\ndef median(values):\n    return 0\n```", "defines `median`, not `mean`"),
    ("```python\ndef mean(values:\n    return (\n```", "does not parse"),
    ("```python\ndef mean(values):\n    return sum(values) / (len(values) + 1)\n```", "changes nothing"),
])
def test_unusable_replies_are_rejected_with_a_reason(reply: str, reason: str) -> None:
    with pytest.raises(SpliceError, match=reason):
        splice(SOURCE, MEAN, reply)


def test_a_crlf_file_gets_crlf_lines() -> None:
    source = SOURCE.replace("\n", "\r\n")
    out = applied(source, splice(source, MEAN, "```python\ndef mean(values):\n    return 0\n```"))
    assert "def mean(values):\r\n    return 0\r\n" in out
    assert "\n" not in out.replace("\r\n", "")


def test_a_function_whose_text_occurs_twice_is_replaced_where_it_is_and_nothing_before_it_is_lost() -> None:
    source = "class A:\n    def size(self):\n        return 0\n\n\nclass B:\n    def size(self):\n        return 0\n"
    out = applied(source, splice(source, Target("s.py", "B.size", "method", 7, 8), "```python\ndef size(self):\n"
                                 "    return 2\n```"))
    assert out == source.replace("class B:\n    def size(self):\n        return 0", "class B:\n    def size(self):\n"
                                 "        return 2")


def test_search_replace_blocks_are_read_from_plain_text() -> None:
    reply = ("calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
             "<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n")
    edits = parse_blocks(reply, "other.py")
    assert [(e.path, e.search, e.replace) for e in edits] == [
        ("calc.py", "    return a - b\n", "    return a + b\n"), ("calc.py", "x = 1\n", "x = 2\n")]
    assert parse_blocks("no blocks", "calc.py") == []


def _constants(code: str, function: str) -> list[str]:
    """The string constants in `function`'s body, as Python reads them."""
    tree = ast.parse(textwrap.dedent(code)) if not code.startswith(" ") else ast.parse(code)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


WARNS = (
    "class Bar:\n    def warn(self, n):\n        if n:\n            print('''first line\n"
    "second at column 0\n   third at an odd indent\n\n        fifth at the method's body\n''')\n"
    "        return f\"\"\"{n} total\n  counted\n\"\"\" + \"a \\\n  b\"\n"
)


@pytest.mark.parametrize("lead", ["", "    "])  # the method written at column 0, or inside its class
def test_a_multi_line_strings_later_lines_keep_their_text_when_the_method_is_moved_to_its_class(lead: str) -> None:
    source = "class Bar:\n    def warn(self, n):\n        return 1\n\n    def other(self):\n        return 2\n"
    reply_def = WARNS.split("\n", 1)[1]
    if not lead:  # at column 0: the code lines lose one step, the string's content stays as written
        rows = reply_def.split("\n")
        inside = {3, 4, 5, 6, 7, 9, 10, 11}  # the strings' later lines (0-based) of `reply_def`
        reply_def = "\n".join(row if i in inside else row.removeprefix("    ") for i, row in enumerate(rows))
    out = applied(source, splice(source, Target("bar.py", "Bar.warn", "method", 2, 3), f"```python\n{reply_def}```"))
    assert _constants(out, "warn") == _constants(WARNS, "warn")
    assert "    def other(self):" in out and out.count("def warn") == 1


def test_a_region_block_found_at_another_indentation_keeps_a_strings_later_lines() -> None:
    source = "class Bar:\n    def warn(self, n):\n        if n:\n            print('old')\n        return 1\n"
    reply = ("```python\n<<<<<<< SEARCH\n    print('old')\n=======\n    print('''new\ncolumn 0\n      odd''')\n"
             ">>>>>>> REPLACE\n```\n")
    [edit] = region_edits(source, Target("bar.py", "Bar.warn", "method", 2, 5), reply)
    out = source.replace(edit.search, edit.replace)
    assert _constants(out, "warn") == ["new\ncolumn 0\n      odd"]


def test_a_docstring_example_block_inside_the_reply_does_not_end_it() -> None:
    """A def whose docstring shows a fenced example (indented with the body, as in tqdm's `logging_redirect_tqdm`):
    the reply's block ends at its own closing fence, so the whole def is spliced, and a stream ending at the
    example's fence has not closed the block yet."""
    source = 'def f(x):\n    """Doubles.\n\n    ```python\n    f(2)\n    ```\n    """\n    return x\n'
    fixed = source.replace("return x", "return 2 * x")
    reply = f"Here it is.\n\n```python\n{fixed}```\n"
    assert code_blocks(reply) == [fixed]
    [edit] = splice(source, Target("m.py", "f", "function", 1, 8), reply)
    assert source.replace(edit.search, edit.replace) == fixed
    assert closed_blocks(reply) == reply
    indented = "```python\n    def g(self):\n        return 1\n    ```\n"  # a closing fence indented with the code
    assert code_blocks(indented) == ["    def g(self):\n        return 1\n"]
