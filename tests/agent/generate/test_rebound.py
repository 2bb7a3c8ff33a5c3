"""A generated function that stores the result of a call under the called name's own name gets a local of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from greenloop.agent.generate.rebound import rename_rebound

WORDCOUNT = "def top_words(text, n):\n    return sorted(set(text.split()))[:n]\n"


def run(tmp_path: Path, test: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "wordcount.py").write_text(WORDCOUNT)
    (tmp_path / "check.py").write_text(test + "\ntest_top()\n", newline="")
    return subprocess.run([sys.executable, "check.py"], cwd=tmp_path, capture_output=True, text=True, timeout=30)


def test_the_result_stored_under_the_functions_name_is_renamed_and_the_call_keeps_it(tmp_path: Path) -> None:
    # the 1.5B model's word-count test, as the generation bench recorded it
    test = ("from wordcount import top_words\n\n\ndef test_top():\n    text = 'b a c a'\n"
            "    top_words = top_words(text, 2)\n    assert len(top_words) == 2\n    assert top_words == ['a', 'b']\n")
    assert "UnboundLocalError" in run(tmp_path, test).stderr
    fixed = rename_rebound("tests/test_wordcount.py", test)
    assert fixed == test.replace("    top_words = top_words(", "    result = top_words(") \
        .replace("len(top_words)", "len(result)").replace("assert top_words ==", "assert result ==")
    assert run(tmp_path, fixed).returncode == 0
    assert rename_rebound("tests/test_wordcount.py", fixed) == fixed  # nothing left to rename


def test_an_earlier_call_counts_and_a_used_result_name_and_odd_endings_are_kept(tmp_path: Path) -> None:
    test = ("from wordcount import top_words\r\n\r\ndef test_top():\r\n    result = 'b a c a'\r\n"
            "    assert top_words(result, 1) == ['a']\r\n    s = 'é'; top_words = ['a']\r\n    assert top_words == ['a']\r\n")
    assert "UnboundLocalError" in run(tmp_path, test).stderr
    fixed = rename_rebound("t.py", test)
    assert "    s = 'é'; top_words_result = ['a']\r\n    assert top_words_result == ['a']\r\n" in fixed
    assert "    assert top_words(result, 1) == ['a']\r\n" in fixed
    assert run(tmp_path, fixed).returncode == 0


def test_functions_that_mean_their_local_throughout_or_declare_it_global_are_left_alone() -> None:
    untouched = [
        # stored before any use: the local is meant everywhere
        "from wordcount import top_words\n\ndef f():\n    top_words = [1]\n    return top_words\n",
        # declared global: a rebinding of the module's name on purpose
        "from wordcount import top_words\n\ndef f():\n    global top_words\n    top_words = top_words(1, 2)\n",
        # a parameter of the same name
        "from wordcount import top_words\n\ndef f(top_words):\n    top_words = top_words(1, 2)\n",
        # not a module-level name
        "def f(g):\n    h = g\n    h = h(1)\n",
        "def f(:\n",  # does not parse
    ]
    for text in untouched:
        assert rename_rebound("t.py", text) == text, text
    assert rename_rebound("t.js", "x") == "x"
