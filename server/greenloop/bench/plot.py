"""The bench plot: pass rate by iteration, one line per config (matplotlib, Agg backend, PNG)."""

from __future__ import annotations

from pathlib import Path

from greenloop.bench.report import ConfigSummary
from greenloop.errors import GreenloopError


def plot_pass_by_iteration(summaries: list[ConfigSummary], out: Path, title: str) -> Path:
    """Write the PNG; GreenloopError when matplotlib is missing (the `bench` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise GreenloopError("the bench plot needs matplotlib: pip install 'greenloop[bench]'") from exc
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        for s in summaries:
            xs = list(range(len(s.pass_by_iteration)))
            ax.step(xs, [100 * v for v in s.pass_by_iteration], where="post", marker="o", label=_label(s))
        ax.set_xlabel("iterations of the fix loop")
        ax.set_ylabel("tasks green (%)")
        ax.set_ylim(0, 100)
        ax.set_xlim(left=0)
        ax.set_xticks(range(max((len(s.pass_by_iteration) for s in summaries), default=1)))
        ax.grid(True, alpha=0.3)
        ax.set_title(title)
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(out, format="png")
    finally:
        plt.close(fig)
    return out


def _label(s: ConfigSummary) -> str:
    return f"{s.config} ({s.passed}/{s.runs}, CI {s.ci_low:.0%}–{s.ci_high:.0%})"
