"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import bisect


def lower_bound(items, target):
    return bisect.bisect_left(items, target)


def find(items, target):
    i = lower_bound(items, target)
    return i if i < len(items) and items[i] == target else -1
