"""Test-runner output -> stack frames inside the workspace, deepest first.

Knows pytest (long/short/line/native tracebacks, collection errors), Python
tracebacks in JUnit failure text, faulthandler dumps of hung tests
(`File "x.py", line 12 in f`, innermost first), Java-style `at pkg.Cls.m(File.java:N)`, Node
stacks (`at fn (file:line:col)`), Rust panics and backtraces. Output from any
other runner falls back to `path:line` patterns. Frames outside the workspace
(stdlib, site-packages, node_modules, the cargo registry, the Rust toolchain)
are dropped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterator

from greenloop.retrieval.model import Frame

_SECTION = re.compile(
    r"^(?:_{3,} .* _{3,}|={3,} .* ={3,}|Traceback \(most recent call last\):"
    r"|(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):)\s*$",
    re.M,
)
# Python: outermost first in the text.
_PY_NATIVE = re.compile(r'^E?\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?!\d| in )(?:, in (?P<func>\S+))?', re.M)
# faulthandler (a hung test's dump from pytest-timeout or faulthandler itself): innermost first, no comma.
_PY_FAULTHANDLER = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)\s*$', re.M)
_PY_LOCATION = re.compile(r"^(?P<path>[^\s:\"'<>][^:\n\"']*?\.pyi?):(?P<line>\d+):(?: in (?P<func>\S+)| |$)", re.M)
# Innermost first in the text.
# `at fn (file:line:col)`; node --test's TAP output prints stack lines without "at ".
_NODE = re.compile(
    r"^\s*(?:at )?(?:async )?(?:(?P<func>[^\s()'\"][^()\n'\"]*?) \()?(?:file://)?"
    r"(?P<path>[^\s()'\"]+?):(?P<line>\d+):\d+\)?\s*$",
    re.M,
)
_JAVA = re.compile(r"^\s*at (?P<func>[\w$.<>]+)\((?P<file>[\w$-]+\.\w+):(?P<line>\d+)\)", re.M)
_RUST_PANIC = re.compile(r"panicked at (?:'(?:[^'\\]|\\.)*', )?(?P<path>[^\s:'\"]+\.rs):(?P<line>\d+):\d+")
_RUST_FRAME = re.compile(r"^\s*\d+: (?P<func>\S+)\s*\n\s+at (?P<path>[^\s]+?\.rs):(?P<line>\d+)(?::\d+)?", re.M)
_FALLBACK = re.compile(r"(?P<path>(?:[A-Za-z]:)?[\w.~/\\+-]*[\w-]\.[A-Za-z][\w]{0,5}):(?P<line>\d+)")

_OUTSIDE = (
    "site-packages/",
    "dist-packages/",
    "node_modules/",
    "/.cargo/registry/",
    "/.cargo/git/",
    "/.rustup/",
    "/rustc/",
    "/lib/python3",
    "node:internal",
)
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")


def parse_frames(text: str, workspace_paths: Collection[str]) -> list[Frame]:
    """Frames of `text` that point into the workspace: each section deepest first, sections in order."""
    resolver = _Resolver(workspace_paths)  # cheap: a dict of names
    frames: list[Frame] = []
    for section in _sections(text):
        frames.extend(_section_frames(section, resolver))
    if not frames:
        frames = list(_fallback(text, resolver))
    return _unique(frames)


def _sections(text: str) -> Iterator[str]:
    starts = [m.start() for m in _SECTION.finditer(text)]
    bounds = [0, *starts, len(text)]
    for begin, end in itertools.pairwise(bounds):
        if end > begin:
            yield text[begin:end]


def _section_frames(section: str, resolver: _Resolver) -> list[Frame]:
    found: list[tuple[int, Frame]] = []  # (order key, frame): outermost-first formats get reversed
    python: list[tuple[int, Frame]] = []
    for pattern in (_PY_NATIVE, _PY_LOCATION):
        for match in pattern.finditer(section):
            frame = resolver.frame(match["path"], match["line"], match["func"])
            if frame is not None:
                python.append((match.start(), frame))
    python.sort(key=lambda item: item[0])
    found.extend((-pos, frame) for pos, frame in python)
    rust_panics = [m for m in _RUST_PANIC.finditer(section)]
    others: list[tuple[int, Frame]] = []
    for match in rust_panics:
        frame = resolver.frame(match["path"], match["line"], None)
        if frame is not None:
            others.append((match.start(), frame))
    for match in _RUST_FRAME.finditer(section):
        frame = resolver.frame(match["path"], match["line"], _rust_function(match["func"]))
        if frame is not None:
            others.append((match.start(), frame))
    for match in _NODE.finditer(section):
        frame = resolver.frame(match["path"], match["line"], _node_function(match["func"]))
        if frame is not None:
            others.append((match.start(), frame))
    for match in _PY_FAULTHANDLER.finditer(section):
        frame = resolver.frame(match["path"], match["line"], match["func"])
        if frame is not None:
            others.append((match.start(), frame))
    for match in _JAVA.finditer(section):
        frame = resolver.java_frame(match["func"], match["file"], match["line"])
        if frame is not None:
            others.append((match.start(), frame))
    others.sort(key=lambda item: item[0])
    ordered = [frame for _, frame in sorted(found, key=lambda item: item[0])]
    return [frame for _, frame in others] + ordered if rust_panics else ordered + [f for _, f in others]


def _fallback(text: str, resolver: _Resolver) -> Iterator[Frame]:
    for match in _FALLBACK.finditer(text):
        frame = resolver.frame(match["path"], match["line"], None)
        if frame is not None:
            yield frame


def _unique(frames: list[Frame]) -> list[Frame]:
    seen: dict[tuple[str, int], Frame] = {}
    out: list[Frame] = []
    for frame in frames:
        key = (frame.path, frame.line)
        first = seen.get(key)
        if first is None:
            seen[key] = frame
            out.append(frame)
        elif first.function is None:
            first.function = frame.function
    return out


def _rust_function(raw: str) -> str:
    name = _RUST_HASH.sub("", raw)
    parts = [p for p in name.split("::") if p and not p.startswith("{{")]
    return parts[-1] if parts else name


def _node_function(raw: str | None) -> str | None:
    if not raw:
        return None
    name = raw.removeprefix("new ").split(" [as ", 1)[0].strip()
    return None if name in ("<anonymous>", "Object.<anonymous>") else name


class _Resolver:
    """Maps a path as a runner printed it to a workspace-relative path (or None)."""

    def __init__(self, workspace_paths: Collection[str]) -> None:
        self.paths = {p.replace("\\", "/").removeprefix("./") for p in workspace_paths}
        self.by_name: dict[str, list[str]] = {}
        for path in sorted(self.paths, key=lambda p: (len(p), p)):  # not set order: the same result every run
            self.by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)

    def resolve(self, raw: str) -> str | None:
        text = raw.strip().replace("\\", "/").removeprefix("file://")
        while text.startswith("./"):
            text = text[2:]
        if text in self.paths:
            return text
        matches = [
            p
            for p in self.by_name.get(text.rsplit("/", 1)[-1], ())
            if text.endswith("/" + p) or p.endswith("/" + text)
        ]
        if not matches:
            return None
        best = max(matches, key=lambda p: (len(p) if text.endswith("/" + p) else len(text), -len(p)))
        if any(marker in "/" + text and marker not in "/" + best for marker in _OUTSIDE):
            return None
        return best

    def frame(self, raw_path: str, line: str, function: str | None) -> Frame | None:
        path = self.resolve(raw_path)
        if path is None or int(line) < 1:
            return None
        return Frame(path=path, line=int(line), function=function or None)

    def java_frame(self, qualified: str, file: str, line: str) -> Frame | None:
        package = qualified.rsplit(".", 2)[0].replace(".", "/") if qualified.count(".") >= 2 else ""
        candidates = self.by_name.get(file, [])
        preferred = [p for p in candidates if package and p.endswith(f"{package}/{file}")]
        if not (preferred or candidates):
            return None
        chosen = (preferred or candidates)[0]
        method = qualified.rsplit(".", 1)[-1]
        return Frame(path=chosen, line=int(line), function=method)
