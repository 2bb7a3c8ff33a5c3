"""A definition's first doc lines (docstrings.py), read from a real index: python docstrings, other languages' doc comments."""

from __future__ import annotations

import asyncio

from greenloop.retrieval import RepoIndex
from greenloop.retrieval.docstrings import DOC_CHARS, doc_summary

PY = ('class Cart:\r\n    def total(self, rows):\r\n        """The sum of the \x1b[1mrows\x1b[0m,\tafter\x07 the discount;\r\n'
      '        never negative.\r\n\r\n        The rest is not shown."""\r\n        return sum(rows)\r\n\r\n'
      '    def bare(self):\r\n        return 1\r\n\r\n    def long(self):\r\n        """' + "word " * 100 + '"""\r\n')
JS = "/**\n * Cut `text` to `width` characters.\n * @param text the text\n */\nexport function trim(text, width) {\n  return text;\n}\n"
RS = "/// The area of a circle.\n#[inline]\npub fn area(r: f64) -> f64 {\n    3.14 * r * r\n}\n"
BROKEN = 'def open_(x:\n    """Never read."""\n    return x\n'


def index_of(files: dict[str, str]) -> RepoIndex:
    index = RepoIndex(workers=1)
    asyncio.run(index.update({path: text.encode() for path, text in files.items()}))
    return index


def test_the_first_lines_are_read_tidy_from_each_language() -> None:
    index = index_of({"cart.py": PY, "trim.js": JS, "area.rs": RS, "broken.py": BROKEN})
    found = {d.symbol: doc_summary(index, d) for path in index.paths for d in index.definitions(path)}
    # CRLF, a terminal colour code, a tab and a bell: one printable line; the second paragraph left out
    assert found["Cart.total"] == "The sum of the rows, after the discount; never negative."
    assert found["Cart.bare"] == "" and found["Cart"] == ""
    assert len(found["Cart.long"]) == DOC_CHARS and found["Cart.long"].endswith("…")
    assert found["trim"] == "Cut `text` to `width` characters. @param text the text"
    assert found["area"] == "The area of a circle."  # its attribute between them passed over
    assert all(v == "" for k, v in found.items() if "open_" in k)  # a def that does not parse: nothing, no error
