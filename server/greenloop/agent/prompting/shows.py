"""What a repair request shows beyond its code (settings `prompt.*`), with the lines the failing tests ran, per file.

Each item is on or off by its setting, so each can be measured by taking it away (the ablation): the
failing comparison in words (compared.py), the first doc lines of what the function calls
(retrieval/docstrings.py), and the lines of a shown function the failing tests ran (`ran_text`).
The ran lines come from the run's coverage pass (retrieval/spectra.py) only while the files it measured
are as it measured them; a shown def whose file differs from the index, or that no failing test ran,
shows none: a line number from other code would point the model at the wrong line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import Spectrum

RANGES_SHOWN = 6  # runs of lines listed for one def; past them, "..."
QUOTE_CHARS = 60  # a quoted line is cut past this


@dataclass(frozen=True)
class RequestShows:
    """Which of the informed items a request shows (the settings' `prompt.*`), and the lines the failing
    tests ran (path -> line numbers; empty when no coverage was measured or `executed_lines` is off)."""

    expected_actual: bool = True
    callee_docs: bool = True
    executed_lines: bool = True
    ran: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def measured(self, spectrum: Spectrum | None) -> RequestShows:
        """These settings with the lines `spectrum`'s failing tests ran (none without one, or with the item off)."""
        if spectrum is None or not self.executed_lines:
            return replace(self, ran={})
        ran: dict[str, set[int]] = {}
        for test in spectrum.failing:
            for path, lines in test.lines.items():
                ran.setdefault(path, set()).update(lines)
        return replace(self, ran={path: frozenset(lines) for path, lines in ran.items()})


def ran_text(shows: RequestShows, copy: WorkingCopy, index: RepoIndex, path: str, start: int, end: int,
             name: str) -> str:
    """The lines `start`-`end` of `path` (the def `name`) the failing tests ran, as runs of lines, each quoted
    by its first and last line ("" when nothing was measured there or the file is not what was measured)."""
    measured = shows.ran.get(path)
    if not measured:
        return ""
    rows = (copy.read(path) or "").splitlines()
    if rows != index.lines(path):  # the coverage pass measured the index's text: another text, other lines
        return ""
    lines = sorted(n for n in measured if start <= n <= min(end, len(rows)))
    if not lines:
        return ""
    runs = _runs(lines, rows)
    shown = [_run(first, last, rows) for first, last in runs[:RANGES_SHOWN]]
    if len(runs) > RANGES_SHOWN:
        shown.append(f"- ... and {len(runs) - RANGES_SHOWN} more")
    return (f"\nThe failing tests ran these lines of `{name}` (numbered as in the file, where it starts at line "
            f"{start}):\n" + "\n".join(shown) + "\n")


def _runs(lines: list[int], rows: list[str]) -> list[tuple[int, int]]:
    """Consecutive ran lines as (first, last); blank and comment lines between two ran lines join them."""
    runs: list[tuple[int, int]] = []
    for n in lines:
        if runs and all(_filler(rows[k - 1]) for k in range(runs[-1][1] + 1, n)):
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _filler(row: str) -> bool:
    stripped = row.strip()
    return not stripped or stripped.startswith(("#", "//"))


def _run(first: int, last: int, rows: list[str]) -> str:
    if first == last:
        return f"- line {first}: `{_quote(rows[first - 1])}`"
    return f"- lines {first}-{last}: `{_quote(rows[first - 1])}` ... `{_quote(rows[last - 1])}`"


def _quote(row: str) -> str:
    text = "".join(c if c.isprintable() else " " for c in row.strip()).replace("`", "'")
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rstrip() + "…"
