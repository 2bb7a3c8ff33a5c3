"""File bytes <-> the text greenloop edits, keeping a file's BOM and line endings on the way back.

The agent works on plain text: UTF-8 without a BOM, lines ending in "\\n". A file's
bytes may carry a UTF-8 BOM and CRLF or mixed endings; `encode_like` writes edited
text back in the file's own format: lines that stayed keep their bytes, new or
changed lines take the file's dominant ending, the BOM stays. Non-UTF-8 files
(latin-1 bytes) are not text here: `not_text_reason` says why, and callers refuse
to edit them, so they reach the sandbox and the user's disk untouched. A lone
"\\r" (classic Mac) is not a line ending here; it stays in the line as it is.
"""

from __future__ import annotations

import difflib
import re

BOM = b"\xef\xbb\xbf"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LF_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def not_text_reason(data: bytes) -> str | None:
    """Why `data` is no text greenloop edits (binary, not UTF-8), or None when it is."""
    if b"\x00" in data[:8192]:
        return "it is a binary file; greenloop edits text files only"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return (f"it is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}, perhaps latin-1); greenloop edits "
                "UTF-8 files only and leaves this one as it is")
    return None


def decode_text(data: bytes) -> str | None:
    """The text to work on: UTF-8 without its BOM, CRLF as "\\n"; None for binary or non-UTF-8 content."""
    if not_text_reason(data) is not None:
        return None
    return data.removeprefix(BOM).decode("utf-8").replace("\r\n", "\n")


def exact_text(data: bytes) -> str:
    """The bytes as text, nothing translated (BOM and CRLF kept; undecodable bytes escaped)."""
    return data.decode("utf-8", errors="surrogateescape")


def encode_like(old: bytes | None, text: str) -> bytes:
    """`text` as bytes in the format of `old` (the file's current bytes; None: a new file, written as given)."""
    if old is None or not_text_reason(old) is not None:
        return text.encode("utf-8")
    bom = BOM if old.startswith(BOM) else b""
    before = old.removeprefix(BOM).decode("utf-8")
    return bom + restore_endings(before, text).encode("utf-8")


def dominant_ending(text: str) -> str:
    """The line ending most lines of `text` use ("\\n" on a tie or when there are no line breaks)."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def split_lines(text: str) -> list[str]:
    """Lines with their endings; only "\\n", "\\r\\n" and "\\r" end a line (as in LSP; not form feeds)."""
    return _LINE.findall(text)


def restore_endings(before: str, after: str) -> str:
    """`after` (any endings) with `before`'s endings: kept lines keep theirs, other lines take the dominant one."""
    eol = dominant_ending(before)
    old = [_cut(line) for line in lf_lines(before)]
    new = [_cut(line) for line in lf_lines(after.replace("\r\n", "\n"))]
    # an edit touches a few lines: match the common head and tail directly, diff only the middle
    head = 0
    while head < min(len(old), len(new)) and old[head][0] == new[head][0]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail][0] == new[-1 - tail][0]:
        tail += 1
    kept = [old[i][1] for i in range(head)]  # the old ending of each new line that stayed, else ""
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(a=[b for b, _ in middle_old], b=[b for b, _ in middle_new], autojunk=False)
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        kept.extend(middle_old[i1 + k][1] if tag == "equal" else "" for k in range(j2 - j1))
    kept.extend(old[len(old) - tail + k][1] for k in range(tail))
    return "".join(body + ((ending or eol) if ended else "") for (body, ended), ending in zip(new, kept, strict=True))


def lf_lines(text: str) -> list[str]:
    """Lines split after "\\n" only, as git and diff split them (a CRLF line keeps its "\\r\\n")."""
    return _LF_LINE.findall(text)


def _cut(line: str) -> tuple[str, str]:
    """(line without its ending, the ending: "\\r\\n", "\\n" or "")."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""
