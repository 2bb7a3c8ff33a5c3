"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import re
from collections import Counter


def word_frequencies(text):
    return dict(Counter(re.findall(r"[\w']+", text.lower())))


def most_common(text, n):
    if n < 0:
        raise ValueError(n)
    return sorted(word_frequencies(text).items(), key=lambda kv: (-kv[1], kv[0]))[:n]
