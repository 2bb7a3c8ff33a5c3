"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import re


def encode(text):
    return "".join(f"{len(m.group(0))}{m.group(1)}" for m in re.finditer(r"(.)\1*", text, re.S))


def decode(data):
    if not re.fullmatch(r"(\d+\D)*", data, re.S):
        raise ValueError(data)
    return "".join(ch * int(n) for n, ch in re.findall(r"(\d+)(\D)", data, re.S))
