"""Example code at the end of a generated module goes under a `__main__` guard, and nothing else moves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from greenloop.agent.generate.script_tail import guard_script_tail

# what Qwen2.5-Coder 0.5B wrote for word-count: `re` imported inside another function, then examples
WORDS = '''from collections import Counter


def words(text):
    import re
    return re.findall(r"\\w+", text.lower())


def top_words(text, n):
    result = Counter(words(text)).most_common(n)
    return result


# Example usage
text = "the cat and the hat"
result = top_words(text, 2)
print(result)
print(re.sub("a", "b", text))
'''


def test_calls_after_the_definitions_run_only_as_a_script(tmp_path: Path) -> None:
    guarded = guard_script_tail("wordcount.py", WORDS)
    head, tail = guarded.split('if __name__ == "__main__":\n')
    assert head == WORDS.split("# Example usage")[0]  # the definitions are untouched
    assert tail == (
        '    # Example usage\n    text = "the cat and the hat"\n    result = top_words(text, 2)\n'
        '    print(result)\n    print(re.sub("a", "b", text))\n'
    )
    (tmp_path / "wordcount.py").write_text(guarded)
    imported = subprocess.run([sys.executable, "-c", "import wordcount; print(wordcount.top_words('a a b', 1))"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0 and imported.stdout == "[('a', 2)]\n", imported.stderr
    (tmp_path / "original.py").write_text(WORDS)
    assert subprocess.run([sys.executable, "-c", "import original"], cwd=tmp_path, capture_output=True,
                          timeout=60).returncode != 0  # which is why the tests all errored at collection


def test_module_state_and_files_without_example_code_are_left_alone() -> None:
    state = (
        "import re\n\n\ndef words(text):\n    return PATTERN.findall(text)\n\n\n"
        "PATTERN = re.compile(r'\\w+')\nNAMES = sorted(['b', 'a'])\n"
    )
    assert guard_script_tail("words.py", state) == state  # globals the functions read stay global
    plain = "def add(a, b):\n    return a + b\n\n\n__all__ = ['add']\nLIMIT = 10\n"
    assert guard_script_tail("calc.py", plain) == plain
    # set-up that prints nothing: registrations, definitions under a condition (as in the stdlib)
    registered = "class Base:\n    pass\n\n\nBase.register(list)\nglobals().update({})\n"
    assert guard_script_tail("base.py", registered) == registered
    conditional = "import os\n\n\ndef a():\n    pass\n\n\nif os.name == 'nt':\n    def where():\n        print('nt')\n"
    assert guard_script_tail("where.py", conditional) == conditional
    script = "def main():\n    print(1)\n\n\nif __name__ == '__main__':\n    main()\n"
    assert guard_script_tail("cli.py", script) == script  # the model wrote the guard itself
    assert guard_script_tail("pkg/__main__.py", "def main():\n    pass\n\n\nmain()\n").endswith("\nmain()\n")
    broken = "def add(a, b:\n    return a + b\n\nprint(add(1, 2))\n"
    assert guard_script_tail("calc.py", broken) == broken
    node = "function add(a, b) { return a + b; }\nconsole.log(add(1, 2));\n"
    assert guard_script_tail("calc.js", node) == node


def test_a_call_that_assigns_a_parameter_name_is_example_code() -> None:
    # `text` is a parameter of the function above, not a global it reads
    code = "def count(text):\n    return len(text.split())\n\n\ntext = str(1)\nprint(count(text))\n"
    assert guard_script_tail("count.py", code).endswith(
        'if __name__ == "__main__":\n    text = str(1)\n    print(count(text))\n'
    )


def test_asserts_after_the_definitions_are_example_code() -> None:
    # the 1.5B model's tokenizer ended with `# Test cases` asserts, one false: the module failed to import
    code = (
        "def tokenize(expr):\n    return expr.split()\n\n# Test cases\n"
        "assert tokenize('a b') == ['a', 'b']\nassert tokenize('2 $ 3') == ValueError('$')\n"
    )
    assert guard_script_tail("tokenizer.py", code) == (
        "def tokenize(expr):\n    return expr.split()\n\n"
        'if __name__ == "__main__":\n    # Test cases\n'
        "    assert tokenize('a b') == ['a', 'b']\n    assert tokenize('2 $ 3') == ValueError('$')\n"
    )
