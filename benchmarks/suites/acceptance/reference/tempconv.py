"""Reference solution (for checking the hidden tests, never shown to the loop)."""

def _check(c):
    if c < -273.15 - 1e-9:
        raise ValueError(c)
    return c


def c_to_f(c):
    return _check(c) * 9 / 5 + 32


def f_to_c(f):
    return _check((f - 32) * 5 / 9)


def c_to_k(c):
    return _check(c) + 273.15
