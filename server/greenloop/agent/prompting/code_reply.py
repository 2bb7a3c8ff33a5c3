"""Code out of a model's reply: the fenced block for the file asked for, or the reply when it is code."""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePosixPath

from greenloop.agent.changes.syntax import first_error
from greenloop_sandbox.languages import source_suffixes

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_PROSE_START = re.compile(
    r"^(sure|certainly|here('s| is| are)|below|okay|ok\b|of course|this (file|code|module)|the (following|file)|"
    r"i (will|have|'ll|'ve)|let me|to (implement|create))",
    re.I,
)
_DATA_SUFFIXES = {".toml", ".json"}  # files that are never prose, besides the languages' source files
# a comment line that only names a file: `# tests/test_slug.py`, `// File: src/a.js`, `/* lib.rs */`
_PATH_COMMENT = re.compile(r"^[ \t]*(?:#+|//|/\*)[ \t]*(?:file:[ \t]*)?`?(?P<path>[\w./-]+\.\w+)`?[ \t]*(?:\*/)?[ \t]*$", re.I)


@dataclass(frozen=True)
class CodeReply:
    """The file text found in a reply, and how it was found."""

    text: str
    how: str  # fenced | bare | none
    problem: str = ""  # why the reply is not usable as it is ("" when it is)


def extract_code(reply: str, path: str, others: Collection[str] = ()) -> CodeReply:
    """The content for `path` in `reply`; `others` are the project's other files.

    A fenced block wins (the one tagged or headed with the file's name, else the largest);
    a reply without fences is used as is when it reads as code, and flagged as prose otherwise.
    Either way, text holding several files under path comments gives only `path`'s part.
    """
    blocks = [m for m in _FENCE.finditer(reply) if m.group("body").strip()]
    if blocks:
        best = max(blocks, key=lambda m: (_names_file(reply, m, path), len(m.group("body"))))
        text = _part_for(_dedent(best.group("body"), best.group("indent")), path, others)
        return CodeReply(text, "fenced", _other_file(text, path, others))
    text = _part_for(_strip_unclosed_fence(reply), path, others).strip("\n")
    if not text.strip():
        return CodeReply("", "none", f"the reply for {path} was empty")
    if looks_like_prose(text, path):
        return CodeReply(text, "none", f"the reply for {path} was prose, not the file's code")
    return CodeReply(text.rstrip() + "\n", "bare", _other_file(text, path, others))


def _other_file(text: str, path: str, others: Collection[str]) -> str:
    """Why `text` is not `path`'s content when its first line names another planned file, else "".

    Asked for `fizzbuzz.py`, the 0.5B model answered `# pyproject.toml` and a poetry manifest.
    """
    first = next((line for line in text.splitlines() if line.strip()), "")
    named = _PATH_COMMENT.match(first)
    other = _planned(named.group("path"), path, others) if named else ""
    if not other or other == path:
        return ""
    return f"it holds `{other}` (its first line names that file), not `{path}`"


def _part_for(text: str, path: str, others: Collection[str]) -> str:
    """The part of `text` that belongs to `path` when path comments split it into several files.

    Qwen2.5-Coder 0.5B, asked for `slug.py`, answered `# slug.py`, the module, `# tests/test_slug.py`
    and the tests in one block; asked for the test, it put the module under `# src/fizzbuzz.py` first.
    Only comments naming `path` or another planned file split; the part under `path` wins, else the
    code before the first other file, else the text stays whole.
    """
    lines = text.split("\n")
    named = [(i, m.group("path")) for i, line in enumerate(lines) if (m := _PATH_COMMENT.match(line))]
    marks = [(i, planned) for i, name in named if (planned := _planned(name, path, others))]
    if not any(name != path for _, name in marks):
        return text
    bounds = [*marks, (len(lines), "")]
    for (start, name), (end, _) in itertools.pairwise(bounds):
        part = "\n".join(lines[start + 1 : end]).strip("\n")
        if name == path and part.strip():
            return part + "\n"
    before = "\n".join(lines[: marks[0][0]]).strip("\n")
    return before + "\n" if before.strip() else text


def _planned(named: str, path: str, others: Collection[str]) -> str:
    """The planned file a path comment names ("" for none): the same path, or a bare file name of one."""
    for candidate in (path, *others):
        if named == candidate or ("/" not in named and named == PurePosixPath(candidate).name):
            return candidate
    return ""


def looks_like_prose(text: str, path: str) -> bool:
    """True when text reads as an explanation rather than the content of `path`."""
    suffix = PurePosixPath(path).suffix.lower()
    source = suffix in source_suffixes()
    if not source and suffix not in _DATA_SUFFIXES:
        return False  # docs and data files may well be prose
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if _PROSE_START.match(first):
        return True
    if source:
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
