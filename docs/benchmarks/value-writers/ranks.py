"""Per-case rank of the first realbugs hit with the `writer` signal's weight at 0 and 3 (one index per case).

    cd <repo> && REALBUGS_DATA=<set> PYTHONPATH=$PWD/server:$PWD/sandbox:$PWD/benchmarks \
        nice -n 19 python3 docs/benchmarks/value-writers/ranks.py <comma-separated case ids> ranks.json

99 stands for "not in the top 10". One-off (docs/decisions/2026-12-value-writers.md), not maintained.
"""

import asyncio
import json
import sys

import realbugs
from greenloop.retrieval import RepoIndex, locate

WEIGHTS = (0.0, 3.0)


async def main(ids: set[str]) -> dict[str, dict[str, object]]:
    rows: dict[str, dict[str, object]] = {}
    for case in realbugs.load_cases(ids=ids):
        index = RepoIndex(workers=1)
        await index.update(case.files())
        row: dict[str, object] = {}
        for weight in WEIGHTS:
            found = await locate(index, case.output, top_k=10, weights={"writer": weight})
            rank = next((i + 1 for i, f in enumerate(found) if realbugs.hits(f.path, f.symbol, case)), 99)
            row[f"rank_writer_{weight:g}"] = rank
            row[f"top3_writer_{weight:g}"] = [f.symbol for f in found[:3]]
        rows[case.id] = row
        print(case.id, rank, flush=True)
    return rows


if __name__ == "__main__":
    result = asyncio.run(main(set(sys.argv[1].split(","))))
    with open(sys.argv[2], "w") as fh:
        json.dump(result, fh, indent=1)
