"""Reference solution (for checking the hidden tests, never shown to the loop)."""

def _check(m):
    if m and any(len(r) != len(m[0]) for r in m):
        raise ValueError("ragged")


def transpose(m):
    _check(m)
    return [list(c) for c in zip(*m, strict=True)] if m else []


def multiply(a, b):
    _check(a)
    _check(b)
    if not a or not b or len(a[0]) != len(b):
        raise ValueError("shapes")
    return [[sum(x * y for x, y in zip(r, c, strict=True)) for c in zip(*b, strict=True)] for r in a]
