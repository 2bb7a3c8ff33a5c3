"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import re


def _key(v):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?", v)
    if not m:
        raise ValueError(v)
    return (int(m[1]), int(m[2]), int(m[3])), m[4]


def parse(version):
    return _key(version)[0]


def compare(a, b):
    (ka, pa), (kb, pb) = _key(a), _key(b)
    if ka != kb:
        return -1 if ka < kb else 1
    if pa == pb:
        return 0
    if pa is None:
        return 1
    if pb is None:
        return -1
    return -1 if pa < pb else 1
