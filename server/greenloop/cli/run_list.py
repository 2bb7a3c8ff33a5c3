"""The table of `greenloop runs list`, laid out to read whole at 80 columns.

The id (which starts with the run's date and time), outcome and numbers keep their width;
mode, model and config share the room left, cut with an ellipsis when it is short.
"""

from __future__ import annotations

from rich import box
from rich.table import Column, Table

from greenloop.run_records import RunSummary


def run_list_table(runs: list[RunSummary], width: int = 80) -> Table:
    """One line per run, at most `width` columns wide (the console's)."""
    rows = [[r.id, r.outcome or "unfinished", str(r.iterations), _count(r.tokens), _cost(r.cost),
             "-" if r.seconds is None else f"{r.seconds:.0f}", _what(r), r.verdict or ""] for r in runs]
    heads = ["id (started)", "outcome", "it", "tokens", "cost", "secs"]
    fixed = [Column(head, no_wrap=True, justify="left" if i < 2 else "right",
                    min_width=max([len(head)] + [len(row[i]) for row in rows]))
             for i, head in enumerate(heads)]
    with_verdicts = any(row[-1] for row in rows)
    room = width - sum((c.min_width or 0) + 2 for c in fixed) - (9 if with_verdicts else 0)
    what = Column("mode: model / config", overflow="ellipsis", no_wrap=True, max_width=max(room, 6))
    table = Table(*fixed, what, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    if with_verdicts:
        table.add_column("verdict", no_wrap=True, overflow="ellipsis", max_width=7)
    for row in rows:
        table.add_row(*(row if with_verdicts else row[:-1]))
    return table


def _what(r: RunSummary) -> str:
    config = "" if r.config_name in ("", "default") else f" / {r.config_name}"
    return f"{r.mode}: {r.model}{config}"


def _cost(usd: float) -> str:
    return f"{usd:.4f}" if usd < 10 else f"{usd:.2f}"

def _count(n: int) -> str:
    """12345 -> 12.3k: token counts in at most 6 characters."""
    if n < 10_000:
        return str(n)
    return f"{n / 1000:.1f}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"
