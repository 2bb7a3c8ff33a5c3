"""An equality assertion's two sides as the test saw them: pytest's `assert actual == expected` message."""

from __future__ import annotations

_OPEN, _CLOSE = "([{", ")]}"


def split_equality(message: str) -> tuple[str, str] | None:
    """`assert -1 == 5` (pytest's message, `AssertionError: ` or not) -> ("5", "-1"): (expected, actual).

    The left side is the actual value, as pytest's own diff reads it (`assert result == expected`).
    None when the message's first line is no `==` comparison at the top level.
    """
    first = message.strip().removeprefix("AssertionError: ").splitlines()[0] if message.strip() else ""
    if not first.startswith("assert "):
        return None
    text = first.removeprefix("assert ")
    at = _top_level(text, " == ")
    if at is None:
        return None
    actual, expected = text[:at].strip(), text[at + 4:].strip()
    return (expected, actual) if actual and expected else None


def _top_level(text: str, needle: str) -> int | None:
    """Index of `needle` outside quotes and brackets, if it occurs there exactly once."""
    depth, quote, found = 0, "", []
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif depth == 0 and text.startswith(needle, i):
            found.append(i)
        i += 1
    return found[0] if len(found) == 1 else None
