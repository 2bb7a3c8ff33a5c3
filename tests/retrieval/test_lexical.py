"""Lexical evidence: identifier splitting, BM25 over definitions (bm25s), names like a test's."""

from __future__ import annotations

from greenloop.retrieval.lexical import build, name_stems, words
from greenloop.retrieval.tags import extract

SOURCE = b'''
def get_new_command(command):
    return command.script.replace("push", "push --force")


def parseHTMLEntity(text):
    return text.replace("&amp;", "&")


def _build_format_filter(spec):
    def check(fmt):
        return spec in fmt
    return check
'''


def test_words_split_snake_and_camel_case() -> None:
    assert words("get_new_command parseHTMLEntity x2") == ["get", "new", "command", "parse", "html", "entity"]
    assert name_stems("test_format_filtering") == name_stems("format_filter") | {"test"}


def test_bm25_and_name_matches_over_definitions() -> None:
    symbols = extract("pkg/rules.py", SOURCE)
    lines = SOURCE.decode().splitlines()
    lexical = build([symbols], lambda _path: lines, lambda d: True)
    scores = lexical.scores("AssertionError: new command should say push --force")
    best = max(scores, key=lambda key: scores[key])
    assert lexical.by_key[best].symbol == "get_new_command"
    assert lexical.scores("nothing matches zzz") == {}
    names = [d.symbol for d, _ in lexical.name_matches("test_format_filtering", ignore=frozenset({"test"}))]
    assert names[0] == "_build_format_filter"
    # a parent's document leaves out its nested definitions' code
    entity = lexical.scores("fmt")
    assert {lexical.by_key[k].symbol for k in entity} == {"_build_format_filter.check"}
