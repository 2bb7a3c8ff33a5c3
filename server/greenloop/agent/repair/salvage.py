"""A reply that rewrote the code where the checks were asked: its definitions spliced in as a code candidate.

The checks rung asks a small model which side of a failing check is wrong. Often it decides
the code is and writes the code out again, corrected, instead of the checks (generation bench:
3 of 4 replies in todo-store's checks round, 6 of 8 in word-count's). Refused, that answer was
lost; it is a candidate like any other, so each top-level definition of the reply that the
project defines once outside the tests is spliced in at that definition and the tests judge it.
"""

from __future__ import annotations

from collections.abc import Callable

from greenloop.agent.changes.syntax import parse
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import EditAction
from greenloop.agent.repair.splice import SpliceError, Target, code_blocks, definition_name, splice
from greenloop.retrieval import language_of


def rewritten_code(copy: WorkingCopy, reply: str, like: str, is_test: Callable[[str], bool]) -> list[EditAction]:
    """The edits putting the reply's definitions (in `like`'s language) in place of the project's own
    of the same names, outside the tests; [] when none is the project's or none changes anything."""
    language = language_of(like)
    sources = {p: copy.read(p) or "" for p in copy.paths() if not is_test(p) and language_of(p) == language}
    defined: dict[str, list[tuple[str, int]]] = {}  # a top-level name -> (path, 1-based line) of each definition
    for path, source in sources.items():
        tree = parse(path, source)
        for node in tree.root_node.named_children if tree is not None else ():
            if name := definition_name(node):
                defined.setdefault(name, []).append((path, node.start_point[0] + 1))
    edits: list[EditAction] = []
    for block in code_blocks(reply):
        tree = parse(like, block)
        if tree is None:
            continue
        for node in tree.root_node.named_children:
            name = definition_name(node)
            homes = defined.get(name, []) if name else []
            if len(homes) != 1:
                continue  # not a definition, or not one the project has in exactly one place
            path, line = homes[0]
            text = block.encode("utf-8")[node.start_byte : node.end_byte].decode("utf-8")
            try:
                edits.extend(splice(sources[path], Target(path, name, "function", line, line), f"```\n{text}\n```"))
            except SpliceError:  # unchanged, or the file would not parse: nothing to try
                continue
    return _one_per_place(edits)


def _one_per_place(edits: list[EditAction]) -> list[EditAction]:
    """Each (path, search) once: a definition written out twice is spliced once."""
    out: dict[tuple[str, str], EditAction] = {}
    for edit in edits:
        out.setdefault((edit.path, edit.search), edit)
    return list(out.values())
