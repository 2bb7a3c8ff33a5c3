"""Whether a green fix is the right one: `same`, `equivalent`, `differs` or `unknown`, beside the bench's outcome.

`same`: every file the fix or the reference fix changes has the same syntax tree in both (formatting,
comments and docstrings aside). Otherwise a differential replay in the sandbox (agent/repair/behaviour.py, probe.py): the calls of
every definition either fix changed are captured while the tests run on the reference tree (plus, for
HumanEvalFix, `variants` type-preserving changes of their arguments), then replayed on the reference
tree twice (calls whose outcome differs between the two are non-deterministic and left out) and on
the fixed tree. Any call that returns or raises something else, or times out where the reference takes
under a third of the timer, makes it `differs`, and so does 3x or more of the reference's time over the calls
(`SLOWER` in total and in at least `SLOW_CALLS` calls each, by `SLOW_CALL` s or more; a call's reference
time is the faster of its two runs): an O(n) loop for an O(sqrt n) one is a
different fix. A generated input on which the reference raises is outside the function's domain
(`factorize(-44)`) and is left out; on a captured one, raising something else differs too. At least
`ENOUGH` agreeing calls make it `equivalent`; fewer, `unknown` with the reason. A `differs` that rests
on time is checked once more (the reference, then the fix, replayed again; each side keeps its faster
run): on a busy machine one slow replay is the machine, not the code.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from greenloop.agent.ports import SandboxPort, open_sandbox_for
from greenloop.agent.repair.behaviour import PER_CALL, capture, capture_note, changed, put, replay, rows
from greenloop.agent.repair.risk import normal_tree

Name = Literal["same", "equivalent", "differs", "unknown"]
ENOUGH = 20  # agreeing calls for `equivalent`
SLOWER = 3.0
SLOW_CALL = 0.001  # seconds more than the reference's in one call, below which a ratio is noise
SLOW_CALLS = 3  # calls that must each be that much slower (one slow call is a pause, not the code)
VARIANTS = 200  # generated inputs per task (HumanEvalFix, realbugs), besides the calls its tests make


@dataclass(frozen=True)
class Verdict:
    """A green fix judged against the reference fix."""

    name: Name
    reason: str = ""
    calls: int = 0  # calls compared
    seconds: float = 0.0  # what judging took (left out of a bench cell's wall time)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def same_trees(buggy: Mapping[str, str], fixed: Mapping[str, str], reference: Mapping[str, str]) -> bool:
    """Every file either fix changed has the same normalized syntax tree in both."""
    paths = {p for p in set(buggy) | set(fixed) | set(reference)
             if buggy.get(p) != fixed.get(p) or buggy.get(p) != reference.get(p)}
    return all(fixed.get(p) == reference.get(p)
               or (p.endswith(".py") and normal_tree(fixed.get(p, "")) == normal_tree(reference.get(p, "")))
               for p in paths)


async def judge(sandbox: SandboxPort, buggy: Mapping[str, str], fixed: Mapping[str, str],
                reference: Mapping[str, str], tests: list[str], *, variants: int = 0, seed: int = 0,
                also: tuple[tuple[str, str], ...] = ()) -> Verdict:
    """The verdict on `fixed` (the green fix's tree) against `reference` (the developers' or canonical fix).

    `tests`: the pytest ids or files whose run on the reference tree gives the calls; `also`: definitions
    to capture besides the changed ones (HumanEvalFix's entry point)."""
    begun = time.monotonic()
    verdict = await _judged(sandbox, buggy, fixed, reference, tests, variants, seed, also)
    return replace(verdict, seconds=round(time.monotonic() - begun, 3))


async def _judged(sandbox: SandboxPort, buggy: Mapping[str, str], fixed: Mapping[str, str],
                  reference: Mapping[str, str], tests: list[str], variants: int, seed: int,
                  also: tuple[tuple[str, str], ...]) -> Verdict:
    if same_trees(buggy, fixed, reference):
        return Verdict("same", "the same code as the reference fix")
    targets = list(dict.fromkeys([*changed(buggy, fixed), *changed(buggy, reference), *also]))
    if not targets:
        return Verdict("unknown", "no python definition changed")
    try:
        return await _replayed(sandbox, fixed, reference, tests, targets, variants, seed)
    except Exception as exc:  # a verdict never stops the bench
        return Verdict("unknown", f"the replay failed: {type(exc).__name__}: {str(exc)[:200]}")


async def _replayed(sandbox: SandboxPort, fixed: Mapping[str, str], reference: Mapping[str, str], tests: list[str],
                    targets: list[tuple[str, str]], variants: int, seed: int) -> Verdict:
    await put(sandbox, _bytes(reference))
    captured = await capture(sandbox, targets, tests, variants=variants, seed=seed)
    if captured is None:
        return Verdict("unknown", "the capture run did not finish")
    first, again = await replay(sandbox), await replay(sandbox)
    await put(sandbox, _bytes(fixed))
    theirs = await replay(sandbox)
    if first is None or again is None or theirs is None:
        return Verdict("unknown", "the replay did not finish")
    note = capture_note(first) or captured[-300:]
    verdict = compare(rows(first), rows(again), rows(theirs), note)
    if not slow(verdict):
        return verdict
    # Slower or timed out: said only if it holds again, with the reference replayed right before the fix
    # once more (a busy machine slows one replay, not the code), each side taking its faster run.
    await put(sandbox, _bytes(reference))
    third = await replay(sandbox)
    await put(sandbox, _bytes(fixed))
    fourth = await replay(sandbox)
    if third is None or fourth is None:
        return verdict
    return compare(rows(first), faster(rows(again), rows(third)), faster(rows(theirs), rows(fourth)), note)


def slow(verdict: Verdict) -> bool:
    """A `differs` that rests on time: 3x slower, or a call that timed out."""
    return verdict.name == "differs" and ("the reference's time" in verdict.reason or "timed out" in verdict.reason)


def faster(one: dict[int, dict[str, Any]], other: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Two replays of one tree as one: each call's faster run; a timeout only where both timed out."""
    out = dict(one)
    for i, row in other.items():
        mine = out.get(i)
        if mine is None or (mine.get("o") == "timeout" and row.get("o") != "timeout") or (
                mine.get("h") == row.get("h") and float(row.get("s", 0.0)) < float(mine.get("s", 0.0))):
            out[i] = row
    return out


def _bytes(tree: Mapping[str, str]) -> dict[str, bytes]:
    return {p: t.encode("utf-8", "surrogateescape") for p, t in tree.items()}


def compare(reference: dict[int, dict[str, Any]], again: dict[int, dict[str, Any]],
            fixed: dict[int, dict[str, Any]], capture_note: str = "") -> Verdict:
    """The verdict from three replays: the reference tree twice, the fixed tree once."""
    agree, slow_ref, slow_fix, slow_calls = 0, 0.0, 0.0, 0
    skipped = set[str]()
    for i, ref in sorted(reference.items()):
        other, mine = again.get(i), fixed.get(i)
        if "skip" in ref:
            skipped.add(str(ref["skip"]))
            continue
        if other is None or mine is None or other.get("h") != ref.get("h") or ref.get("o") == "timeout":
            continue  # not deterministic, not reached, or too slow on the reference itself
        if ref.get("v") and ref.get("o") == "raised":
            continue  # a generated input the reference refuses is outside the function's domain
        took = min(float(ref.get("s", 0.0)), float(other.get("s", 0.0)))
        if mine.get("o") == "timeout" and took * SLOWER > PER_CALL:
            continue  # the reference is slow on it too: a timeout here says nothing of 3x
        if mine.get("h") != ref.get("h"):
            what = "timed out" if mine.get("o") == "timeout" else "gave another result"
            return Verdict("differs", f"call {i} {what}: {str(mine.get('t', ''))[:120]} against the reference's "
                                      f"{str(ref.get('t', ''))[:120]}", agree + 1)
        agree += 1
        takes = float(mine.get("s", 0.0))
        slow_ref, slow_fix = slow_ref + took, slow_fix + takes
        slow_calls += takes >= SLOWER * took and takes - took >= SLOW_CALL
    if slow_calls >= SLOW_CALLS and slow_fix >= SLOWER * slow_ref:
        return Verdict("differs", f"{slow_fix / slow_ref:.1f}x the reference's time over {agree} calls", agree)
    if agree >= ENOUGH:
        return Verdict("equivalent", f"{agree} calls agree", agree)
    why = f"only {agree} comparable call(s)"
    if skipped:
        why += "; " + "; ".join(sorted(skipped))[:200]
    elif not reference:
        why += f"; the capture kept none ({' '.join(capture_note.split())[-160:]})"
    return Verdict("unknown", why, agree)


def texts(files: Mapping[str, bytes]) -> dict[str, str]:
    """A tree's files as text (bytes that are not UTF-8 kept as surrogates, so they come back the same)."""
    return {p: data.decode("utf-8", "surrogateescape") for p, data in files.items()}


def after(files: Mapping[str, str], changes: Any) -> dict[str, str]:
    """The tree a change set (events.ChangeSet) leaves: `files` with its changes applied."""
    out = dict(files)
    for change in changes.files:
        if change.after is None:
            out.pop(change.path, None)
        else:
            out[change.path] = change.after
    return out


async def humanevalfix_verdict(files: Mapping[str, str], extra: Mapping[str, Any], changes: Any,
                               settings: Any) -> Verdict:
    """A green HumanEvalFix fix against the canonical solution, on the task's test inputs and `VARIANTS`
    seeded variants of them, in a sandbox of its own."""
    entry = str(extra.get("entry_point", ""))
    canonical = extra.get("fixed")
    if not isinstance(canonical, str) or not entry:
        return Verdict("unknown", "the task has no canonical solution")
    module = f"{entry}.py"
    reference = {**files, module: canonical}
    async with open_sandbox_for(settings, "python", label="bench-verdict") as sandbox:
        return await judge(sandbox, files, after(files, changes), reference, [f"test_{entry}.py"],
                           variants=VARIANTS, also=((module, entry),))


def patched(files: Mapping[str, str], patch: str) -> dict[str, str]:
    """`files` with a unified diff applied (`patch -p1` in a scratch folder: it reads and writes files only).

    Files go through as bytes: a text read would turn CRLF into LF (and mangle a PNG), and every file so
    changed would count as a difference from the reference, so a fix equal to it could not be `same`."""
    with tempfile.TemporaryDirectory(prefix="greenloop-verdict-") as tmp:
        root = Path(tmp)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode("utf-8", "surrogateescape"))
        done = subprocess.run(["patch", "-p1", "-s", "-i", "-"], input=patch, text=True, cwd=root,
                              capture_output=True, timeout=60)
        if done.returncode != 0:
            raise ValueError(f"the reference patch does not apply: {(done.stdout + done.stderr).strip()[:200]}")
        return {p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8", "surrogateescape")
                for p in root.rglob("*") if p.is_file() and not p.name.endswith(".orig")}
