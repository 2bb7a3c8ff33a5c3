"""Seeded subsets of a suite's tasks: a plain draw, or one stratified by a field of the tasks' `extra`.

A stratified draw gives each stratum (e.g. each project of realbugs) a share of the sample in
proportion to its size, by largest remainders, with at least one task per stratum while the sample
has room for one of each; within a stratum the tasks are drawn with the seed, and the strata
take turns in the result (each in the file's order), so a bench stopped part-way has run some of
every stratum. A plain draw keeps the file's order. The same file, size and seed give the same
subset.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar

from greenloop.errors import GreenloopError


class HasExtra(Protocol):
    @property
    def extra(self) -> dict[str, object]: ...


T = TypeVar("T", bound=HasExtra)


def sample_tasks(tasks: Sequence[T], size: int, seed: int, stratify: str | None = None) -> list[T]:
    """`size` of `tasks`, drawn with `seed` (stratified by `extra[stratify]` when it is given)."""
    if size >= len(tasks):
        return list(tasks)
    if stratify is None:
        chosen = set(random.Random(seed).sample(range(len(tasks)), size))
        return [t for i, t in enumerate(tasks) if i in chosen]
    strata: dict[Hashable, list[int]] = {}
    for i, task in enumerate(tasks):
        if stratify not in task.extra:
            raise GreenloopError(f"task {i + 1} has no field {stratify!r} to stratify the sample by")
        value = task.extra[stratify]
        strata.setdefault(value if isinstance(value, Hashable) else repr(value), []).append(i)
    rng = random.Random(seed)
    picked = [sorted(rng.sample(strata[key], count))
              for key, count in allocate({k: len(v) for k, v in strata.items()}, size, rng).items()]
    # strata in turn (each in the file's order), so a bench stopped part-way is still spread over them
    return [tasks[group[i]] for i in range(max(map(len, picked), default=0)) for group in picked if i < len(group)]


def allocate(sizes: dict[Hashable, int], total: int, rng: random.Random) -> dict[Hashable, int]:
    """How many of `total` each stratum gets: one each first, the rest in proportion to size by
    largest remainders (ties go to the stratum seen first); with fewer places than strata, one
    each to `total` strata drawn with `rng`."""
    order = list(sizes)
    if total < len(order):
        drawn = set(rng.sample(order, total))
        return {k: int(k in drawn) for k in order}
    shares = dict.fromkeys(order, 1)
    left = total - len(order)
    room = {k: sizes[k] - 1 for k in order}
    whole = sum(room.values())
    if left <= 0 or whole == 0:
        return shares
    exact = {k: left * room[k] / whole for k in order}
    for k in order:
        shares[k] += math.floor(exact[k])
    rest = total - sum(shares.values())
    by_remainder = sorted(order, key=lambda k: (-(exact[k] - math.floor(exact[k])), order.index(k)))
    for k in by_remainder:
        if rest == 0:
            break
        if shares[k] < sizes[k]:
            shares[k] += 1
            rest -= 1
    return shares

