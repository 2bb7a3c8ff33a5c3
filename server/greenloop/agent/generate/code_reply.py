"""Code out of a model's reply: the fenced block for the file asked for, or the reply when it is code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from greenloop.agent.syntax import first_error

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_PROSE_START = re.compile(
    r"^(sure|certainly|here('s| is| are)|below|okay|ok\b|of course|this (file|code|module)|the (following|file)|"
    r"i (will|have|'ll|'ve)|let me|to (implement|create))",
    re.I,
)
_CODE_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".rs", ".toml", ".json"}


@dataclass(frozen=True)
class CodeReply:
    """The file text found in a reply, and how it was found."""

    text: str
    how: str  # fenced | bare | none
    problem: str = ""  # why the reply is not usable as it is ("" when it is)


def extract_code(reply: str, path: str) -> CodeReply:
    """The content for `path` in `reply`.

    A fenced block wins (the one tagged or headed with the file's name, else the largest);
    a reply without fences is used as is when it reads as code, and flagged as prose otherwise.
    """
    blocks = [m for m in _FENCE.finditer(reply) if m.group("body").strip()]
    if blocks:
        best = max(blocks, key=lambda m: (_names_file(reply, m, path), len(m.group("body"))))
        return CodeReply(_dedent(best.group("body"), best.group("indent")), "fenced")
    text = _strip_unclosed_fence(reply).strip("\n")
    if not text.strip():
        return CodeReply("", "none", f"the reply for {path} was empty")
    if looks_like_prose(text, path):
        return CodeReply(text, "none", f"the reply for {path} was prose, not the file's code")
    return CodeReply(text.rstrip() + "\n", "bare")


def looks_like_prose(text: str, path: str) -> bool:
    """True when text reads as an explanation rather than the content of `path`."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix not in _CODE_SUFFIXES:
        return False  # docs and data files may well be prose
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if _PROSE_START.match(first):
        return True
    if suffix in (".py", ".js", ".mjs", ".cjs", ".ts", ".rs"):
        return first_error(path, text) is not None and _sentence_share(text) > 0.5
    return False


def _sentence_share(text: str) -> float:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    sentences = [ln for ln in lines if re.match(r"^[A-Z][a-z]+( [a-z'’,]+){3,}", ln)]
    return len(sentences) / len(lines) if lines else 0.0


def _names_file(reply: str, block: re.Match[str], path: str) -> int:
    """2: the fence info names the file; 1: the line before the block names it; 0: neither."""
    name = PurePosixPath(path).name
    if name in block.group("info"):
        return 2
    before = reply[: block.start()].rstrip().rsplit("\n", 1)[-1]
    return 1 if name in before else 0


def _dedent(body: str, indent: str) -> str:
    if indent:
        body = "\n".join(
            line[len(indent) :] if line.startswith(indent) else line for line in body.split("\n")
        )
    return body.rstrip() + "\n"


def _strip_unclosed_fence(reply: str) -> str:
    """A reply cut off after an opening fence: drop the fence line (and a lone closing one)."""
    lines = reply.strip("\n").split("\n")
    if lines and re.match(r"^\s*(`{3,}|~{3,})", lines[0]):
        lines = lines[1:]
    if lines and re.match(r"^\s*(`{3,}|~{3,})\s*$", lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines)
