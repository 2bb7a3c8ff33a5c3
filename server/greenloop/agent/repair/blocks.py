"""SEARCH/REPLACE blocks written as plain text (a change in several places), parsed into edit actions.

The shape (Aider's, which models have seen many times):

    path/to/file.py
    <<<<<<< SEARCH
    lines now in the file
    =======
    the new lines
    >>>>>>> REPLACE

Code stays plain text (no JSON string escaping); the file name is the last non-empty line
before the block, else the one the request was about.
"""

from __future__ import annotations

import re

from greenloop.agent.plan import EditAction

_BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^[ \t]*={5,9}[ \t]*\n(?P<replace>.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.M | re.S,
)
_PATH_LINE = re.compile(r"^[`*#\s]*(?:file:\s*)?(?P<path>[\w./-]+\.\w+)[`*\s:]*$", re.I)


def parse_blocks(reply: str, default_path: str) -> list[EditAction]:
    """Every SEARCH/REPLACE block of `reply` as an edit; empty when there is none."""
    edits: list[EditAction] = []
    path = default_path
    last_end = 0
    for match in _BLOCK.finditer(reply):
        named = _path_before(reply[last_end : match.start()])
        path = named or path
        search = match.group("search")
        replace = match.group("replace")
        edits.append(EditAction(path=path, search=search, replace=replace))
        last_end = match.end()
    return edits


def _path_before(text: str) -> str:
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if not stripped or stripped.startswith(("```", "~~~")):
            continue
        match = _PATH_LINE.match(stripped)
        return match.group("path") if match else ""
    return ""
