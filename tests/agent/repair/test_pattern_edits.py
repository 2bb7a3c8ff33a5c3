"""Small edits of regular expressions: which patterns, which edits, and the loop fixing one with Docker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.pattern_edits import pattern_edits
from greenloop.agent.repair.small_edit_candidates import small_edit_replies
from greenloop.agent.repair.splice import Target, code_blocks
from tests.agent.conftest import fixed_by_edits, write_project


def replies(source: str, name: str, path: str = "m.py", limit: int = 1000) -> list[str]:
    lines = source.count("\n")
    return [code_blocks(r)[0] for r in small_edit_replies(source, Target(path, name, "function", 1, lines), limit)]


def edited(source: str, path: str = "m.py") -> list[str]:
    """The file with each pattern edit made (all of the file's nodes; `small_edit_replies` passes a function's)."""
    tree = parse(path, source)
    assert tree is not None
    stack, nodes = [tree.root_node], []
    while stack:
        nodes.append(stack.pop())
        stack.extend(reversed(nodes[-1].children))
    data = source.encode("utf-8")
    return [(data[:start] + new.encode("utf-8") + data[end:]).decode("utf-8") for start, end, new in pattern_edits(nodes)]


def patterns(found: list[str], quote: str = "r'") -> set[str]:
    """The first pattern literal of each reply, as written."""
    out = set()
    for text in found:
        start = text.find(quote)
        if start >= 0:
            out.add(text[start + len(quote) : text.index(quote[-1], start + len(quote))])
    return out


def test_a_class_gets_the_patterns_own_punctuation_and_quantifiers_change() -> None:
    source = "import re\n\n\ndef unescape(s):\n    return re.sub(r'&([^;]+;)', lambda m: m.group(1), s)\n"
    found = patterns(replies(source, "unescape"))
    assert "&([^&;]+;)" in found  # `&amp;&lt;` must not be read as one entity
    assert "&([^;]*;)" in found and "&([^;]+?;)" in found
    assert "^&([^;]+;)" in found and "&([^;]+;)$" in found and "\\b&([^;]+;)" in found
    for pattern in found:
        re.compile(pattern)


def test_a_member_dropped_once_and_everywhere_an_empty_alternative_and_an_escaped_dot() -> None:
    source = (
        "import re\n\n\ndef base(url):\n"
        "    m = re.match(r'//[^/]+/(?:[^/?#]+/)?([^/?#]+)/?(?:[?#]|$)', url)\n"
        "    return m.group(1) if m else ''\n\n\n"
        "def attrs(html):\n    return re.findall(r'(?:=\\w+|=\"[^\"]*\")(?:=\\w+|=\"[^\"]*\") v.1', html)\n"
    )
    found = patterns(edited(source))
    assert "//[^/]+/(?:[^?#]+/)?([^/?#]+)/?(?:[?#]|$)" in found  # one occurrence
    assert "//[^/]+/(?:[^?#]+/)?([^?#]+)/?(?:[?#]|$)" in found  # every occurrence at once
    assert "//[^/]+/(?:[^/?#]+/)?([^/?#]+)/?(?:[?#]|$|)" in found
    found = patterns([t[t.index("def attrs"):] for t in edited(source)])
    assert '(?:=\\w+|="[^"]*"|)(?:=\\w+|="[^"]*"|) v.1' in found
    assert '(?:=\\w+|="[^"]*")(?:=\\w+|="[^"]*") v\\.1' in found


def test_a_plain_string_is_a_pattern_only_where_re_takes_it_and_keeps_its_escapes_valid() -> None:
    source = (
        "import re\n\n\ndef f(s):\n    label = 'total (all) + tax?'\n    return re.split('[,;]+', s), label\n"
    )
    found = edited(source)
    assert found and all("label = 'total (all) + tax?'" in text for text in found)  # not a pattern: never edited
    split = patterns(found, "re.split('")
    assert "[,;]*" in split and "\\\\b[,;]+" in split  # `\b` written `\\b` in a plain string, not a backspace


def test_a_verbose_pattern_keeps_its_comments_and_a_javascript_regex_is_edited() -> None:
    source = (
        "import re\n\n\ndef num(s):\n    return re.match(r'''(?x)\n        \\d+  # digits, then a unit\n"
        "        (?:px|em)\n    ''', s)\n"
    )
    found = edited(source)
    assert any("(?:px|em|)" in text for text in found)
    assert all("# digits, then a unit" in text for text in found)  # `#` starts a comment there: not punctuation
    js = "function key(s) {\n  return s.replace(/^[^=]+=/, '');\n}\n"
    found = patterns(edited(js, "m.js"), "s.replace(/")
    assert "^[^=]*=" in found and "^[^=]+?=" in found


def test_a_pattern_this_reader_does_not_follow_is_left_alone_and_every_edit_compiles() -> None:
    source = (
        "import re\n\n\ndef f(s):\n"
        "    return re.match(r'(a|b', s) or re.match(r'[a-', s) or re.match(r'x(?#c)', s) or r'a{2}[]x]+'\n"
    )
    found = edited(source)
    assert found  # the last pattern's edits
    assert all("r'(a|b'" in text and "r'[a-'" in text and "r'x(?#c)'" in text for text in found)
    last = patterns([text.split(" or ")[-1] for text in found])
    assert "a{2}[]x]*" in last and "a{2}[x]+" in last and "a{2}[]]+" in last
    for pattern in last:
        re.compile(pattern)


@pytest.mark.docker
async def test_a_pattern_one_quantifier_off_is_fixed_before_any_model_is_asked(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "p", {
        "config.py": (
            "import re\n\n\ndef setting(line):\n    m = re.match(r'^\\s*([\\w.]+)\\s*=\\s*(.+)$', line)\n"
            "    if m is None:\n        raise ValueError(f'not a setting: {line!r}')\n"
            "    return m.group(1), m.group(2).strip()\n"
        ),
        "test_config.py": (
            "import pytest\n\nfrom config import setting\n\n\ndef test_value():\n"
            "    assert setting('a.b = 1') == ('a.b', '1')\n\n\ndef test_empty_value():\n"
            "    assert setting('name =') == ('name', '')\n\n\ndef test_not_a_setting():\n"
            "    with pytest.raises(ValueError):\n        setting('# comment')\n"
        ),
    })
    wrong = "```python\ndef setting(line):\n    return line, ''\n```\n"
    _, after = await fixed_by_edits(ws, scripted_llm, make_settings(ws, loop={"small_edits": 60, "candidates": 1}), wrong)
    assert r"(.*)$" in after
