#!/usr/bin/env bash
# bench_versions.py with its cells kept: each finished cell is appended to CELLS-before-cells.jsonl and
# CELLS-after-cells.jsonl (the bench's results.jsonl, linked), so the run resumes on any machine and its
# cells can be committed as they finish. MEMO (default OUT/memo.jsonl) is the model's memo. Called by
# hef-model-versions.sh and rb20-versions.sh:
#   bash benchmarks/runs/versions-cells.sh OUT BEFORE AFTER CELLS SUITE_FILE -- BENCH_ARGS...
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1; before=$2; after=$3; cells=$4; suite=$5; shift 5
[ "${1:-}" = "--" ] && shift
mkdir -p "$(dirname "$cells")"
for label in before after; do
  mkdir -p "$out/$label/.bench"
  touch "$cells-$label-cells.jsonl"
  ln -sf "$cells-$label-cells.jsonl" "$out/$label/.bench/results.jsonl"
done
GREENLOOP_LLM__CASSETTE=${MEMO:-$out/memo.jsonl} GREENLOOP_LLM__CASSETTE_MODE=memo \
  PYTHONPATH=$repo/server:$repo/sandbox python3 "$repo/benchmarks/bench_versions.py" --before "$before" \
  --after "$after" --suite-file "$suite" --out "$out" -- "$@"
