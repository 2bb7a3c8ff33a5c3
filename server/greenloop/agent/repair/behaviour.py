"""What a change does to the calls the tests make: the calls of named definitions captured in the sandbox
(probe.py, a pytest plugin) and replayed on another tree, call by call.

Two users: the bench's correctness verdict (bench/correctness.py: a green fix against the reference fix)
and the loop's choice among greens (second_look.py: of two greens alike in risk and votes, the one
that changes less of what the changed functions did on the calls the passing tests make; a fix
should change what the failing tests ask, not what the passing ones relied on).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from greenloop.agent.ports import SandboxPort
from greenloop.agent.repair.risk import functions, normal_tree

PROBE_DIR = ".greenloop-probe"
PROBE = Path(__file__).with_name("probe.py")
CALLS = f"{PROBE_DIR}/calls.pkl"
PER_CALL = 2.0  # seconds a replayed call may take
REPLAY_BUDGET = 90.0  # seconds for all the calls of one replay
ALIKE_CALLS = 20  # steady calls two trees must agree on to count as alike (the bench's `equivalent` asks as many)
VARIANTS = 200  # seeded variants of the captured calls' arguments, for `alike`
ALIKE_BUDGET = 20.0  # seconds for one of `alike`'s replays: it runs inside a fix, where the bench's verdict does not
Rows = dict[int, dict[str, Any]]


def definitions(source: str) -> dict[str, str]:
    """Each function's qualified name (`Class.method`; a nested def counts as its outer function) -> its tree."""
    return {name: normal_tree(ast.unparse(node)) or "" for name, node in functions(source).items()}


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, qualified name) of every python definition that differs between two trees' texts."""
    out: list[tuple[str, str]] = []
    for path in sorted(set(before) | set(after)):
        if not path.endswith(".py") or before.get(path) == after.get(path):
            continue
        old, new = definitions(before.get(path, "")), definitions(after.get(path, ""))
        out.extend((path, name) for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name))
    return out


async def put(sandbox: SandboxPort, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset()) -> None:
    """A tree into the sandbox (the whole tree: files synced before and missing here go), with the probe."""
    await sandbox.sync({**files, f"{PROBE_DIR}/probe.py": PROBE.read_bytes()}, deleted)


async def capture(sandbox: SandboxPort, targets: Sequence[tuple[str, str]], tests: Sequence[str], *,
                  variants: int = 0, seed: int = 0, pytest_args: Sequence[str] = ()) -> str | None:
    """Run `tests` (pytest ids or files; none: all) on the tree `put` left, recording the calls of `targets`
    (plus `variants` seeded variants of their arguments); what pytest printed, or None if it did not finish."""
    settings = {"targets": [list(t) for t in targets], "out": CALLS, "variants": variants, "seed": seed}
    env = {"GREENLOOP_PROBE": json.dumps(settings), "PYTHONPATH": PROBE_DIR}
    return await sandbox.run_command(
        ["python3", "-m", "pytest", "-q", "-p", "probe", "-p", "no:cacheprovider", "-o", "addopts=",
         *pytest_args, *tests], seconds=300, env=env)


async def replay(sandbox: SandboxPort, budget: float = REPLAY_BUDGET) -> str | None:
    """The captured calls run again on the tree in the sandbox now, within `budget` seconds: one JSON line per
    call (probe.py)."""
    return await sandbox.run_command(["python3", f"{PROBE_DIR}/probe.py", "replay", CALLS, str(PER_CALL),
                                      str(budget)], seconds=budget + 60)


def rows(output: str) -> Rows:
    """A replay's calls by index."""
    out: Rows = {}
    for line in output.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("i"), int) and "stop" not in row:
            out[row["i"]] = row
    return out


def capture_note(output: str) -> str:
    """What the capture kept, from the replay's first line: "12 captured, 3 with arguments that cannot be pickled"."""
    for line in output.splitlines():
        try:
            meta = json.loads(line)
        except ValueError:
            continue
        if isinstance(meta, dict) and "captured" in meta:
            return f"{meta['captured']} captured, {meta.get('not_picklable', 0)} with arguments that cannot be pickled"
    return ""


async def alike(sandbox: SandboxPort, start: Mapping[str, bytes], first: Mapping[str, bytes],
                second: Mapping[str, bytes], tests: Sequence[str], *, variants: int = VARIANTS) -> bool | None:
    """Whether two changed trees give the same outcome on every call `tests` make to the definitions either
    changed, and on `variants` seeded variants of those calls' arguments (captured on `first`, replayed on
    both within ALIKE_BUDGET each; calls that differ between two replays of `first`, that a replay did not
    reach, or that timed out on either tree are left out: two timeouts say nothing of what the calls give). None when it cannot be told: no python definition changed, the capture or a replay
    did not finish, or fewer than ALIKE_CALLS calls to compare."""
    before = _texts(start)
    targets = list(dict.fromkeys(t for tree in (first, second) for t in changed(before, _texts(tree))))
    if not targets:
        return None
    try:
        await put(sandbox, first)
        if await capture(sandbox, targets, tests, variants=variants) is None:
            return None
        one, two = await replay(sandbox, ALIKE_BUDGET), await replay(sandbox, ALIKE_BUDGET)
        await put(sandbox, second)
        other = await replay(sandbox, ALIKE_BUDGET)
        if one is None or two is None or other is None:
            return None
        base, theirs = steady(rows(one), rows(two)), rows(other)
        both = [i for i in base if i in theirs and "timeout" not in (base[i].get("o"), theirs[i].get("o"))]
        if len(both) < ALIKE_CALLS:
            return None
        return all(theirs[i].get("h") == base[i].get("h") for i in both)
    finally:  # the sandbox as it was: the start's tree, no probe, no calls file
        await sandbox.sync(start)
        await sandbox.run_command(["rm", "-rf", PROBE_DIR], seconds=30)


def _texts(tree: Mapping[str, bytes]) -> dict[str, str]:
    return {p: data.decode("utf-8", "surrogateescape") for p, data in tree.items()}


def steady(first: Rows, again: Rows) -> Rows:
    """The calls that gave the same outcome in two replays on one tree (the rest are not deterministic)."""
    return {i: row for i, row in first.items()
            if "skip" not in row and i in again and again[i].get("h") == row.get("h")}


async def changes_on_passing_calls(sandbox: SandboxPort, start: Mapping[str, bytes],
                                   trees: Sequence[Mapping[str, bytes]], failing: Sequence[str],
                                   suite: Sequence[str] = ()) -> list[int] | None:
    """For each tree, how many of the calls the passing tests make to the definitions any tree changes give
    another outcome than on `start` (the state before the change). None when that cannot be told: no
    python definition changed, or the capture or a replay did not finish."""
    before = _texts(start)
    targets = list(dict.fromkeys(t for tree in trees for t in changed(
        before, _texts(tree))))
    if not targets:
        return None
    try:
        await put(sandbox, start)
        deselect = [arg for test in failing for arg in ("--deselect", test)]
        if await capture(sandbox, targets, suite, pytest_args=deselect) is None:
            return None
        first, again = await replay(sandbox), await replay(sandbox)
        if first is None or again is None:
            return None
        base = steady(rows(first), rows(again))
        counts: list[int] = []
        for tree in trees:
            await put(sandbox, tree)
            theirs = await replay(sandbox)
            if theirs is None:
                return None
            mine = rows(theirs)
            counts.append(sum(1 for i, row in base.items() if mine.get(i, {}).get("h") != row.get("h")))
        return counts
    finally:  # the sandbox as it was: the start's tree, no probe, no calls file
        await sandbox.sync(start)
        await sandbox.run_command(["rm", "-rf", PROBE_DIR], seconds=30)
