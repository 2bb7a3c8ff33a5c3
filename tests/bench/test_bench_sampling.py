"""Seeded samples of a suite: stratified by project on the repository's realbugs set, and the plain draw."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from greenloop.bench.sampling import allocate, sample_tasks
from greenloop.bench.suites import Task, load_suite
from greenloop.errors import GreenloopError

SET = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "realbugs" / "cases.jsonl"


def test_a_stratified_sample_gives_every_project_its_share_by_size() -> None:
    whole = load_suite("realbugs", SET).tasks
    sizes = Counter(t.extra["project"] for t in whole)
    sample = load_suite("realbugs", SET, sample=40, sample_seed=0, stratify="project").tasks
    got = Counter(t.extra["project"] for t in sample)
    assert len(sample) == 40 and set(got) == set(sizes)  # every project, however small
    left, room = 40 - len(sizes), len(whole) - len(sizes)  # one each first, the rest by size beyond that one
    for project, size in sizes.items():  # within one of its proportional share of the rest
        assert abs(got[project] - 1 - left * (size - 1) / room) < 1, (project, got[project], size)
    projects = list(sizes)  # in the file's order; the sample takes them in turn, each in file order
    assert [t.extra["project"] for t in sample[: len(projects)]] == projects
    order = [t.id for t in whole]
    for project in projects:
        mine = [order.index(t.id) for t in sample if t.extra["project"] == project]
        assert mine == sorted(mine)


def test_a_stratified_sample_is_fixed_by_its_seed() -> None:
    def ids(seed: int) -> list[str]:
        return [t.id for t in load_suite("realbugs", SET, sample=40, sample_seed=seed, stratify="project").tasks]

    assert ids(0) == ids(0)
    assert ids(0) != ids(1)


def test_the_plain_draw_is_the_one_earlier_benches_used() -> None:
    whole = load_suite("realbugs", SET).tasks
    chosen = set(random.Random(0).sample(range(len(whole)), 20))
    assert [t.id for t in load_suite("realbugs", SET, sample=20, sample_seed=0).tasks] == [
        t.id for i, t in enumerate(whole) if i in chosen]


def test_fewer_places_than_strata_take_one_each_from_drawn_strata() -> None:
    shares = allocate({"a": 5, "b": 1, "c": 9}, 2, random.Random(0))
    assert sum(shares.values()) == 2 and set(shares.values()) <= {0, 1}
    assert allocate({"a": 5, "b": 1, "c": 9}, 9, random.Random(0)) == {"a": 3, "b": 1, "c": 5}


def test_a_field_the_tasks_lack_is_a_clear_error() -> None:
    tasks = [Task(id=str(i), kind="fix", extra={"project": "p"}) for i in range(3)] + [Task(id="x", kind="fix")]
    with pytest.raises(GreenloopError, match="task 4 has no field 'project'"):
        sample_tasks(tasks, 2, 0, "project")
