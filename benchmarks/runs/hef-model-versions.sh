#!/usr/bin/env bash
# The HumanEvalFix 40 tasks the model decides (the ones the small edits do not turn green without a model
# call, in either run of the one-loop parity bench) at two commits, task by task in turn
# (bench_versions.py), one seed, one memo. Resumable: its cells are kept under CELLS (a path
# in the repository) by versions-cells.sh; MEMO as there.
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/hef-model-versions.sh OUT BEFORE AFTER SEED CELLS
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1"); before=$2; after=$3; seed=$4; cells=$repo/$5
parity=$repo/docs/benchmarks/one-loop-parity
mkdir -p "$out"
python3 - "$repo/benchmarks/data/humanevalfix/humanevalfix-python.jsonl" "$parity" "$out/hef-model.jsonl" <<'PY'
import json, sys
from pathlib import Path
rows, keep, dest = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
runs = [json.loads((keep / f).read_text())["results"] for f in ("before-ef4f42d.json", "after-fa2b1f6.json")]
by_model = {r["task"] for run in runs for r in run if r["outcome"] != "green" or r["prompt_tokens"] > 0}
order = [r["task"] for r in runs[1]]  # the parity run's order
lines = {json.loads(l)["task_id"]: l for l in rows.read_text().splitlines() if l.strip()}
dest.write_text("".join(lines[t] + "\n" for t in order if t in by_model))
print(f"{len(by_model)} tasks the model decides", file=sys.stderr)
PY
bash "$repo/benchmarks/runs/versions-cells.sh" "$out" "$before" "$after" "$cells" "$out/hef-model.jsonl" -- --suite humanevalfix --max-iterations 3 \
  --sandbox docker --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b --seed "$seed" \
  --config benchmarks/configs/second-look.toml
