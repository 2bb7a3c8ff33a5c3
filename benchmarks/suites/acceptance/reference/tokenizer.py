"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import re


def tokenize(expr):
    out = []
    for m in re.finditer(r"\s*(?:(\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*|[-+*/^()])|(\S))", expr):
        if m.group(2):
            raise ValueError(m.group(2))
        if m.group(1):
            out.append(m.group(1))
    return out
