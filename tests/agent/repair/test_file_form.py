"""A python file written again keeps the text of the functions whose code it left as it was, and its ending."""

from __future__ import annotations

import difflib

from greenloop.agent.repair.file_form import as_it_was

BEFORE = (
    "import os\n\n\ndef snoop(prefix=''):\n    '''Snoop.\n\n    Usage::\n\n        @snoop()\n\n    '''\n"
    "    return prefix  # as it is\n\n\n@staticmethod\ndef write(output):\n    with open(output_path) as f:\n"
    "        return f.read()\n\n\n"
)


def _changed(before: str, after: str) -> list[str]:
    return [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]


def test_a_function_whose_code_is_the_same_keeps_its_text_and_the_file_its_ending() -> None:
    # PySnooper-3 written again by the 1.5B model: the fix, and in passing a docstring's blank line, a
    # comment and the file's last blank lines gone
    reply = BEFORE.replace("        @snoop()\n\n", "        @snoop()\n").replace("  # as it is", "")
    reply = reply.replace("open(output_path)", "open(output)").rstrip("\n") + "\n"
    kept = as_it_was(BEFORE, reply)
    assert _changed(BEFORE, kept) == ["-     with open(output_path) as f:", "+     with open(output) as f:"]
    assert kept.endswith("f.read()\n\n\n")


def test_a_changed_decorator_or_signature_is_a_change_and_text_that_does_not_parse_stays_as_written() -> None:
    reply = BEFORE.replace("@staticmethod\n", "").replace("def snoop(prefix=''):", "def snoop(prefix='>'):")
    kept = as_it_was(BEFORE, reply)
    assert _changed(BEFORE, kept) == ["- def snoop(prefix=''):", "+ def snoop(prefix='>'):", "- @staticmethod"]
    broken = "def write(output:\n    pass\n"
    assert as_it_was(BEFORE, broken) == broken


def test_blank_lines_between_functions_stay_as_they_were_and_a_changed_line_stays_changed() -> None:
    # a model writing the file again puts one blank line between functions where the file had two
    reply = BEFORE.replace("\n\n\n@staticmethod", "\n\n@staticmethod").replace("import os\n\n\n", "import os\n\n")
    reply = reply.replace("open(output_path)", "open(output)")
    kept = as_it_was(BEFORE, reply)
    assert _changed(BEFORE, kept) == ["-     with open(output_path) as f:", "+     with open(output) as f:"]
    added = as_it_was(BEFORE, reply.replace("import os\n", "import os\nimport sys\n"))
    assert "import os\nimport sys\n\ndef snoop" in added  # around a line added, the gaps are the reply's
    assert "return prefix  # as it is\n\n\n@staticmethod" in added
    assert as_it_was("def f():\n    return 1\n", "import os\n\n\ndef f():\n    return 1\n").startswith("import os\n\n\n")
    text = "X = '''a\n\nb'''\n\n\ndef f():\n    return X\n"
    assert as_it_was(text, text.replace("a\n\nb", "a\nb")) == text.replace("a\n\nb", "a\nb")  # the string's own
    swapped = "def g():\n    pass\n\ndef f():\n    pass\n"  # two functions' order changed: nothing follows as before
    assert as_it_was("def f():\n    pass\n\n\ndef g():\n    pass\n", swapped) == swapped
