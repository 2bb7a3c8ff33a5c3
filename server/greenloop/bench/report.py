"""A bench's results per config: pass rate with a Wilson 95% interval, how many greens are right, iterations,
tokens, cost, time."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from greenloop.bench.acceptance import acceptance_lines, acceptance_summary
from greenloop.bench.state import CellResult

Z95 = 1.959964


def wilson_interval(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion; (0, 0) for no trials."""
    if total <= 0:
        return 0.0, 0.0
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class ConfigSummary:
    config: str
    runs: int
    passed: int
    pass_rate: float
    ci_low: float
    ci_high: float
    errors: int
    mean_iterations: float
    mean_tokens: float
    mean_cost: float
    total_cost: float
    mean_seconds: float
    median_seconds: float
    pass_by_iteration: list[float] = field(default_factory=list)  # [k-1]: share green within k iterations
    outcomes: dict[str, int] = field(default_factory=dict)
    median_candidates: float = 0.0  # candidates tested per run
    tests_edited: int = 0  # test files in the change sets offered (the loop must never touch them)
    pass_at_k: list[float] = field(default_factory=list)  # [k-1]: share of runs green by their k-th candidate
    fixes_per_minute: float = 0.0  # runs made green per minute of wall time
    by_group: dict[str, list[int]] = field(default_factory=dict)  # project -> [passed, runs] (realbugs)
    not_run: dict[str, str] = field(default_factory=dict)  # task -> "outcome: why"; not in `runs`
    verdicts: dict[str, int] = field(default_factory=dict)  # green runs per verdict (bench/correctness.py)
    correct: int = 0  # green runs judged `same` or `equivalent`
    correct_low: float = 0.0  # Wilson 95% interval of correct / runs
    done: int = 0  # green runs offered as done: their change is not labelled plausible (risk.py)
    done_correct: int = 0  # of those, judged `same` or `equivalent`
    done_wrong: int = 0  # of those, judged `differs` or `unknown`: a fix offered as done that is not known right
    correct_high: float = 0.0
    greens: dict[str, str] = field(default_factory=dict)  # task -> "verdict (kind): reason", per green run
    # time to green: wall seconds of the runs that ended green (median, 90th percentile; None: none green)
    median_seconds_to_green: float | None = None
    p90_seconds_to_green: float | None = None
    candidates_per_minute: float = 0.0  # candidates tested per minute of wall time, all runs
    served_seconds: float = 0.0  # model seconds charged to runs whose replies a memo cassette served
    acceptance: dict[str, Any] = field(default_factory=dict)  # generate: hidden tests (bench/acceptance.py)


def summarize(results: list[CellResult], configs: list[str], max_iterations: int) -> list[ConfigSummary]:
    """One summary per config, in the order given (the first is the baseline)."""
    return [_summary(name, [r for r in results if r.config == name], max_iterations) for name in configs]


def _summary(name: str, every: list[CellResult], max_iterations: int) -> ConfigSummary:
    rows = [r for r in every if r.counted]
    n = len(rows)
    passed = sum(r.passed for r in rows)
    low, high = wilson_interval(passed, n)
    verdicts: dict[str, int] = {}
    done = done_correct = done_wrong = 0
    for r in rows:
        if r.passed:
            verdict = verdict_of(r)
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
            if not r.extra.get("risky"):
                done += 1
                done_correct += verdict in ("same", "equivalent")
                done_wrong += verdict in ("differs", "unknown")  # not known right is not done (issue 58)
    correct = verdicts.get("same", 0) + verdicts.get("equivalent", 0)
    right_low, right_high = wilson_interval(correct, n)
    seconds = [r.seconds for r in rows]
    outcomes: dict[str, int] = {}
    for r in rows:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    horizon = max([max_iterations, *(r.iterations for r in rows if r.passed)])
    by_iteration = [
        sum(r.passed and r.iterations <= k for r in rows) / n if n else 0.0 for k in range(horizon + 1)
    ]
    return ConfigSummary(
        config=name,
        runs=n,
        passed=passed,
        pass_rate=passed / n if n else 0.0,
        ci_low=low,
        ci_high=high,
        errors=outcomes.get("error", 0),
        mean_iterations=_mean([r.iterations for r in rows]),
        mean_tokens=_mean([r.tokens for r in rows]),
        mean_cost=_mean([r.cost for r in rows]),
        total_cost=sum(r.cost for r in rows),
        mean_seconds=_mean(seconds),
        median_seconds=statistics.median(seconds) if seconds else 0.0,
        pass_by_iteration=by_iteration,
        outcomes=outcomes,
        median_candidates=statistics.median([int(r.extra.get("candidates", 0)) for r in rows]) if rows else 0.0,
        tests_edited=sum(int(r.extra.get("tests_edited", 0)) for r in rows),
        pass_at_k=_pass_at_k(rows),
        fixes_per_minute=passed / (sum(seconds) / 60) if sum(seconds) > 0 else 0.0,
        by_group=_by_group(rows),
        not_run={r.task: f"{r.outcome}: {r.error}" for r in every if not r.counted},
        verdicts=verdicts,
        correct=correct,
        correct_low=right_low,
        correct_high=right_high,
        done=done,
        done_correct=done_correct,
        done_wrong=done_wrong,
        greens={f"{r.task}#{r.repeat}": _green_line(r) for r in rows if r.passed},
        **_time_to_green(rows),
        acceptance=acceptance_summary(rows),
    )


def verdict_of(result: CellResult) -> str:
    """A green run's correctness verdict; `unjudged` for results from before verdicts were kept."""
    verdict = result.extra.get("verdict")
    return str(verdict.get("name", "unknown")) if isinstance(verdict, dict) else "unjudged"


def _green_line(result: CellResult) -> str:
    found = result.extra.get("verdict")
    verdict: dict[str, Any] = found if isinstance(found, dict) else {}
    kind = result.extra.get("kind") or "?"
    risky = ", plausible" if result.extra.get("risky") else ""
    return f"{verdict_of(result)} ({kind}{risky}): {str(verdict.get('reason', ''))[:160]}"


def _time_to_green(rows: list[CellResult]) -> dict[str, Any]:
    """Median and 90th-percentile wall seconds of the green runs, and candidates tested per minute."""
    green = sorted(r.seconds for r in rows if r.passed)
    minutes = sum(r.seconds for r in rows) / 60
    tested = sum(int(r.extra.get("candidates", 0)) for r in rows)
    return {
        "median_seconds_to_green": statistics.median(green) if green else None,
        "p90_seconds_to_green": green[max(0, math.ceil(0.9 * len(green)) - 1)] if green else None,
        "candidates_per_minute": tested / minutes if minutes > 0 else 0.0,
        "served_seconds": sum(float(r.extra.get("served_seconds", 0.0)) for r in rows),
    }


def _time_lines(summaries: list[ConfigSummary]) -> list[str]:
    """Time to green beside the fix rate: what a user waits for a fix, and how fast candidates are tested."""
    lines = ["", "Time to green (wall seconds of the runs that ended green):", "",
             "| config | fixed | median s to green | p90 s to green | candidates tested / min |",
             "|---|---:|---:|---:|---:|"]
    for s in summaries:
        median = "-" if s.median_seconds_to_green is None else f"{s.median_seconds_to_green:.1f}"
        p90 = "-" if s.p90_seconds_to_green is None else f"{s.p90_seconds_to_green:.1f}"
        lines.append(f"| {s.config} | {s.passed}/{s.runs} | {median} | {p90} | {s.candidates_per_minute:.1f} |")
    served = [f"{s.config} {s.served_seconds:.0f} s" for s in summaries if s.served_seconds > 0]
    if served:
        lines += ["", "Replies served from the memo cassette are charged the seconds the model took when they were "
                  f"recorded ({', '.join(served)}), so these times compare across configs."]
    return lines


def _by_group(rows: list[CellResult]) -> dict[str, list[int]]:
    """[passed, runs] per task group (`extra["project"]`), for suites whose tasks have one."""
    out: dict[str, list[int]] = {}
    for r in rows:
        group = r.extra.get("project")
        if group:
            tally = out.setdefault(str(group), [0, 0])
            tally[0] += r.passed
            tally[1] += 1
    return out


def _pass_at_k(rows: list[CellResult]) -> list[float]:
    """Share of runs whose k-th tested candidate (counted across rounds) was the first green one."""
    firsts = [r.extra.get("first_green") for r in rows]
    horizon = max([int(f) for f in firsts if f] or [0])
    n = len(rows)
    return [sum(1 for f in firsts if f and int(f) <= k) / n for k in range(1, horizon + 1)] if n else []


def _mean(values: list[float] | list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def report_json(
    meta: dict[str, Any], summaries: list[ConfigSummary], results: list[CellResult]
) -> dict[str, Any]:
    return {
        "meta": meta,
        "configs": [asdict(s) for s in summaries],
        "results": [asdict(r) | {"passed": r.passed} for r in results],
    }


def _group_lines(summaries: list[ConfigSummary]) -> list[str]:
    """Per project: fixed / runs under each config; then every task that was not run, with why."""
    groups = sorted({g for s in summaries for g in s.by_group})
    lines: list[str] = []
    if groups:
        lines += ["", "Fixed per project (fixed / runs):", "",
                  "| project | " + " | ".join(s.config for s in summaries) + " |",
                  "|---|" + "---:|" * len(summaries)]
        for g in groups:
            cells = [f"{s.by_group[g][0]} / {s.by_group[g][1]}" if g in s.by_group else "-" for s in summaries]
            lines.append(f"| {g} | " + " | ".join(cells) + " |")
    not_run = {task: why for s in summaries for task, why in s.not_run.items()}
    if not_run:
        lines += ["", f"Not run, so not counted in runs ({len(not_run)} task(s)):", ""]
        lines += [f"- {task}: {why}" for task, why in sorted(not_run.items())]
    return lines


def _code_line(meta: dict[str, Any]) -> str:
    """The commits the cells ran at, with how many each (a report from before they were recorded: not recorded)."""
    code = meta.get("code")
    if code is None:
        return "not recorded (made before cells recorded their commit)"
    return "; ".join(f"{label}: {n} cell(s)" for label, n in code.items()) or "no cells yet"


def report_markdown(meta: dict[str, Any], summaries: list[ConfigSummary], plot_name: str | None) -> str:
    """The human report: what ran, one row per config (first = baseline), outcomes, skipped rows."""
    lines = [
        f"# Bench: {meta['suite']} ({meta['tasks']} tasks x {meta['repeat']} repeats)",
        "",
        f"- model: `{meta['model']}`; sandbox: `{meta['sandbox']}`; jobs: {meta['jobs']}; "
        f"max iterations: {meta['max_iterations']}; base seed: {meta['seed']}",
        f"- suite file: `{meta['suite_file']}`; made {meta['finished']} by greenloop {meta['version']}",
        f"- command: `{meta['command']}`",
        f"- code: {_code_line(meta)}",
        "",
        "| config | runs | pass rate | 95% CI (Wilson) | vs baseline | mean iterations | mean tokens "
        "| mean cost (USD) | mean wall s | median wall s | fixes/min | median candidates | tests edited | errors |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = summaries[0].pass_rate if summaries else 0.0
    for s in summaries:
        delta = "baseline" if s is summaries[0] else f"{(s.pass_rate - base) * 100:+.1f} pp"
        lines.append(
            f"| {s.config} | {s.runs} | {s.pass_rate:.1%} | {s.ci_low:.1%} – {s.ci_high:.1%} | {delta} "
            f"| {s.mean_iterations:.2f} | {s.mean_tokens:.0f} | {s.mean_cost:.4f} | {s.mean_seconds:.1f} "
            f"| {s.median_seconds:.1f} | {s.fixes_per_minute:.2f} | {s.median_candidates:g} | {s.tests_edited} "
            f"| {s.errors} |"
        )
    lines += _time_lines(summaries)
    lines += acceptance_lines(summaries)
    lines += ["", "Green and right (verdicts of the green runs against the reference fix, bench/correctness.py):", "",
              "| config | green | correct (same + equivalent) | correct rate, 95% CI | same | equivalent | differs "
              "| unknown | unjudged | offered as done (not plausible) | correct of those | wrong offered as done |",
              "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        v = s.verdicts
        lines.append(f"| {s.config} | {s.passed} | {s.correct} ({s.correct / s.passed if s.passed else 0:.0%} of green) "
                     f"| {s.correct / s.runs if s.runs else 0:.1%} ({s.correct_low:.1%} – {s.correct_high:.1%}) "
                     f"| {v.get('same', 0)} | {v.get('equivalent', 0)} | {v.get('differs', 0)} | {v.get('unknown', 0)} "
                     f"| {v.get('unjudged', 0)} | {s.done} "
                     f"| {s.done_correct} ({s.done_correct / s.done if s.done else 0:.0%}) | {s.done_wrong} |")
    curves = [s for s in summaries if s.pass_at_k]
    if curves:
        lines += ["", "pass@k (share of runs green by their k-th tested candidate):", ""]
        for s in curves:
            shown = ", ".join(f"k={k}: {v:.0%}" for k, v in enumerate(s.pass_at_k, 1))
            lines.append(f"- {s.config}: {shown}")
    lines += _group_lines(summaries)
    for s in summaries:
        if s.greens:
            lines += ["", f"Greens of {s.config}:", ""]
            lines += [f"- {task}: {line}" for task, line in sorted(s.greens.items())]
    lines += ["", "Outcomes per config:", ""]
    for s in summaries:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(s.outcomes.items())) or "none"
        lines.append(f"- {s.config}: {counts}")
    if plot_name:
        lines += ["", f"![pass rate by iteration]({plot_name})"]
    skipped = meta.get("skipped_rows") or []
    if skipped:
        lines += ["", f"Skipped suite rows ({len(skipped)}):", ""]
        lines += [f"- {why}" for why in skipped]
    notes = meta.get("notes") or []
    if notes:
        lines += ["", "Notes:", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"
