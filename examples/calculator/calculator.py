"""A tiny calculator. It has a seeded one-line bug for greenloop to fix."""


def add(a: float, b: float) -> float:
    return a + b


def subtract(a: float, b: float) -> float:
    return a - b


def multiply(a: float, b: float) -> float:
    return a * b


def average(values: list[float]) -> float:
    """The mean of `values`; 0.0 for an empty list."""
    if not values:
        return 0.0
    return sum(values) / (len(values) + 1)
