"""Reference solution (for checking the hidden tests, never shown to the loop)."""

import re
import unicodedata


def slugify(text):
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
