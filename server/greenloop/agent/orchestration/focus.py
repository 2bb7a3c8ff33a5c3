"""The lines a person pointed at (`improve` on a selection): what a fix is asked to keep to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Focus:
    """A file's lines, 1-based and inclusive, as the workspace names the file."""

    path: str
    start_line: int
    end_line: int
