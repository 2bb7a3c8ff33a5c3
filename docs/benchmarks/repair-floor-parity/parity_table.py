"""Two sets of bench cells paired by (task, config): outcome, verdict and tokens compared, differences listed.

    python3 parity_table.py BEFORE.jsonl AFTER.jsonl [--strip-config-prefix parity-]

BEFORE and AFTER are bench results files (a bench folder's `.bench/results.jsonl`, or the copies beside this
file). A config name in AFTER may carry a prefix the other lacks (the e5fc4d3 bench's `parity-plain`).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

Key = tuple[str, str]


def cells(path: Path, prefix: str = "") -> dict[Key, dict[str, Any]]:
    rows: dict[Key, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            rows[(row["task"], row["config"].removeprefix(prefix))] = row
    return rows


def facts(row: dict[str, Any]) -> tuple[str, str | None, int]:
    verdict = (row["extra"].get("verdict") or {}).get("name")
    return row["outcome"], verdict, row["prompt_tokens"] + row["completion_tokens"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--strip-config-prefix", default="")
    args = parser.parse_args()
    before, after = cells(args.before), cells(args.after, args.strip_config_prefix)
    same, differ = 0, 0
    summary: Counter[tuple[str, str, str]] = Counter()
    for key in sorted(set(before) & set(after)):
        pair = (("before", facts(before[key])), ("after", facts(after[key])))
        for label, (outcome, verdict, _) in pair:
            summary[(label, key[1], "cells")] += 1
            summary[(label, key[1], "green")] += outcome == "green"
            summary[(label, key[1], "right")] += verdict in ("same", "equivalent")
        if pair[0][1] == pair[1][1]:
            same += 1
        else:
            differ += 1
            print("differs:", key, pair[0][1], "|", pair[1][1])
    print(f"paired cells: {same + differ}, identical (outcome, verdict, tokens): {same}, differ: {differ}")
    for config in sorted({k[1] for k in summary}):
        for label in ("before", "after"):
            print(label, config, {k: summary[(label, config, k)] for k in ("cells", "green", "right")})
    print("only before:", sorted(set(before) - set(after)), "only after:", sorted(set(after) - set(before)))


if __name__ == "__main__":
    main()
