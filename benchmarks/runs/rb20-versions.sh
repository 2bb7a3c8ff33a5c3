#!/usr/bin/env bash
# The realbugs sample of 20 (the one-loop parity run's tasks, in its order) at two commits, task by task in
# turn (bench_versions.py), one memo. Resumable: its cells are kept under CELLS (a path
# in the repository) by versions-cells.sh; MEMO as there.
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/rb20-versions.sh OUT BEFORE AFTER CELLS
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1"); before=$2; after=$3; cells=$repo/$4
parity=$repo/docs/benchmarks/one-loop-parity
realbugs=$repo/benchmarks/data/realbugs
mkdir -p "$out/suite"
[ -e "$out/suite/cases" ] || ln -s "$(realpath "$realbugs/cases")" "$out/suite/cases"
python3 - "$realbugs/cases.jsonl" "$parity/rb20-after-fa2b1f6.json" "$out/suite/rb20.jsonl" <<'PY'
import json, sys
from pathlib import Path
rows, run, dest = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
order = [r["task"] for r in json.loads(run.read_text())["results"]]
lines = {json.loads(l)["id"]: l for l in rows.read_text().splitlines() if l.strip()}
dest.write_text("".join(lines[t] + "\n" for t in order))
print(f"{len(order)} realbugs tasks", file=sys.stderr)
PY
bash "$repo/benchmarks/runs/versions-cells.sh" "$out" "$before" "$after" "$cells" "$out/suite/rb20.jsonl" -- --suite realbugs --max-iterations 3 \
  --sandbox docker --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b \
  --config benchmarks/configs/second-look.toml
