"""The value signal (`writer`): the definitions that write an attribute the failing frames read.

A failure surfaces where a bad value is used, and is often fixed where the value was
written: `Tracer.trace` passes `self.custom_repr` down to where it crashes, and the fix
is in `Tracer.__init__`, which sets it. For each project frame of a traceback, the
attributes read on its line (`self.x`, `obj.x`; not method calls), and the attribute an
`AttributeError` says is missing, lead to the definitions that write them (the index's
`Definition.writes`: `o.x = ...`, `o.x += ...`, `setattr(o, "x", ...)`, `o.__dict__...`).
A `self.x` read prefers writers in the frame's own class. An attribute's writers share
its value (1/n, none past `_MAX_WRITERS`): an attribute written everywhere says little.
"""

from __future__ import annotations

import re

from greenloop.retrieval.candidates import Evidence
from greenloop.retrieval.evidence import is_test_definition
from greenloop.retrieval.index import RepoIndex, is_test_path
from greenloop.retrieval.model import Definition, Frame

_MAX_WRITERS = 6  # an attribute written in more definitions than this is not followed
_PER_FRAME = 3  # attributes followed per frame, those with the fewest writers first
_OTHER_FILE = 0.5  # what a writer in another file than the frame keeps
_MISSING = re.compile(r"AttributeError: (?!module ).*?has no attribute '(?P<name>\w+)'")
_STRING = re.compile(r"""(?P<q>['"])(?:\\.|(?!(?P=q)).)*(?P=q)""")
_COMMENTS = {"python": re.compile(r"#.*$")}  # a line comment, by language (else `//`)
_SLASHES = re.compile(r"//.*$")
# `.name` after a name or a bracket, not followed by a call; the receiver is the name just before the dot
_READ = re.compile(r"(?<=[\w)\]])\s*\.\s*(?P<name>[A-Za-z_]\w*)\b(?!\s*\()")
_BEFORE = re.compile(r"([A-Za-z_]\w*)\s*$")
_TARGET = re.compile(r"(?<![=!<>+\-*/%&|^:@])=(?!=)")  # a plain assignment's `=` (not `==`, `+=`, `<=`)
_OWN = ("self", "cls", "this")


def attribute_writers(index: RepoIndex) -> dict[str, list[tuple[Definition, str]]]:
    """Attribute name -> (definition, receiver) of each write outside test code (memoized per index version)."""
    def build() -> dict[str, list[tuple[Definition, str]]]:
        table: dict[str, list[tuple[Definition, str]]] = {}
        for definition in index.definitions():
            if definition.writes and not is_test_definition(definition):
                for write in definition.writes:
                    receiver, _, name = write.rpartition(".")
                    table.setdefault(name, []).append((definition, receiver))
        return table

    return index.derived("attribute_writers", build)


def reads(line: str, language: str | None = "python") -> list[tuple[str, str]]:
    """(receiver, attribute) read on a source line: not called, not the target of a plain assignment."""
    code = _COMMENTS.get(language or "", _SLASHES).sub("", _STRING.sub("''", line))
    target = _TARGET.search(code)
    if target is not None and _balanced(code[: target.start()]):
        code = code[target.end():]
    found: dict[str, str] = {}
    for match in _READ.finditer(code):
        before = _BEFORE.search(code, 0, match.start())
        found.setdefault(match["name"], before[1] if before else "")
    return [(receiver, name) for name, receiver in found.items()]


def _read(index: RepoIndex, frame: Frame) -> list[tuple[str, str]]:
    """What the frame's line reads."""
    lines = index.lines(frame.path)
    symbols = index.symbols(frame.path)
    return reads(lines[frame.line - 1], symbols.language if symbols else None) if 0 < frame.line <= len(lines) else []


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def offer_writers(index: RepoIndex, frames: list[Frame], text: str, evidence: Evidence) -> None:
    """The writers of what each project frame reads; every frame counts the same (the value passed through each).

    Where an `AttributeError` was raised, only the missing attribute is followed: it names the value at fault.
    """
    table = attribute_writers(index)
    project = [(f, _read(index, f)) for f in frames if not is_test_path(f.path)]
    missing = _MISSING.search(text)
    raised = -1  # the frame that reads the missing attribute (else the deepest)
    if missing is not None:
        raised = next((i for i, (_, read) in enumerate(project) if missing["name"] in {n for _, n in read}), 0)
    for depth, (frame, read) in enumerate(project):
        reader = index.enclosing(frame.path, frame.line)
        if reader is not None and is_test_definition(reader):
            continue
        if depth == raised:  # on the object the line reads it from, when it does
            read = [(next((r for r, n in read if n == missing["name"]), ""), missing["name"])] if missing else []
        followed = sorted(((name, _writers(table, name, receiver, reader)) for receiver, name in read),
                          key=lambda item: len(item[1]))
        found: dict[str, tuple[Definition, float, list[str]]] = {}  # writer key -> (writer, value, names)
        for name, writers in [item for item in followed if item[1]][:_PER_FRAME]:
            for writer in writers:
                value = (1.0 if writer.path == frame.path else _OTHER_FILE) / len(writers)
                _, best, names = found.get(writer.key, (writer, 0.0, []))
                found[writer.key] = (writer, max(best, value), [*names, name])
        who = f"`{reader.symbol}`" if reader is not None else f"{frame.path}:{frame.line}"
        for writer, value, names in found.values():
            written = ", ".join(f"`{n}`" for n in names)
            if depth == raised:
                note = f"writes {written}, which the AttributeError in {who} says is missing"
            else:
                note = f"writes {written}, which {who} reads {'on its failing line' if depth == 0 else 'on its line in the traceback'}"
            evidence.offer(writer, "writer", value, note)


def _writers(
    table: dict[str, list[tuple[Definition, str]]], name: str, receiver: str, reader: Definition | None
) -> list[Definition]:
    """The definitions that write `name` (not the reader itself), the nearest kind first: for `self.name`, those
    of the reader's class; else those that write it on a receiver of the same name (`state.name`); else all.
    Empty when there are more than `_MAX_WRITERS`."""
    writes = [(w, r) for w, r in table.get(name, ()) if reader is None or w.key != reader.key]
    if receiver in _OWN and reader is not None and reader.parent is not None:
        tier = [(w, r) for w, r in writes if w.path == reader.path and w.parent == reader.parent]
    else:
        tier = [(w, r) for w, r in writes if receiver and r == receiver and r not in _OWN]
    writers = list({w.key: w for w, _ in tier or writes}.values())
    return writers if len(writers) <= _MAX_WRITERS else []
