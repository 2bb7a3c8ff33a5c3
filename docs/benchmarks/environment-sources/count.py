"""The environment bench's count over every row kept here: the latest row per case, files in the order run.

    python3 count.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
ORDER = ["cases.jsonl", "misses-rerun-61532c7.jsonl", "youtube-dl-10-second-run.jsonl", "rest-7a5d05a.jsonl",
         "misses-5278a84.jsonl", "rest-69815ef.jsonl", "misses-56895be.jsonl", "misses-a7acc94.jsonl",
         "chain-d542182.jsonl"]


def main() -> None:
    latest: dict[str, dict[str, dict[str, object]]] = {}
    for name in ORDER:
        with (HERE / name).open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if "declared" in row:
                    latest[row["id"]] = row
    hand = [case for case, row in latest.items() if row["hand"].get("runs_for_the_reason")]
    declared = [case for case in hand if latest[case]["declared"].get("runs_for_the_reason")]
    print(f"cases measured: {len(latest)}; hand pins run for the bug's reason: {len(hand)}; declared only: "
          f"{len(declared)} ({len(declared) / max(1, len(hand)):.1%} of the hand pins)")
    print("declared-only misses:", sorted(set(hand) - set(declared)))
    print("hand misses:", sorted(set(latest) - set(hand)))


if __name__ == "__main__":
    main()
