#!/usr/bin/env bash
# Issue 39's model baseline: the full loop (second-look.toml, the default) with the 1.5B model on realbugs'
# stratified sample of 40 (--sample 40 --sample-seed 0 --stratify project over all 164 rows), at one fixed
# commit, resumable on any machine: each finished cell is appended to
# docs/benchmarks/realbugs-164/s40-model-cells.jsonl (the bench's results.jsonl, committed). The sample's case
# folders not in git are built first from the mirrors (build.py --only; `fetch` the projects first).
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/s40-model.sh OUT
set -euo pipefail
commit=02f4d84
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1")
tree=$out/tree-$commit
[[ -d $tree ]] || git -C "$repo" worktree add --detach "$tree" $commit
data=$repo/benchmarks/data/realbugs
mkdir -p "$out/.bench"
bash "$repo/benchmarks/runs/s40-suite.sh" "$out/s40.jsonl"
ln -sfn "$data/cases" "$out/cases"
touch "$repo/docs/benchmarks/realbugs-164/s40-model-cells.jsonl"
ln -sf "$repo/docs/benchmarks/realbugs-164/s40-model-cells.jsonl" "$out/.bench/results.jsonl"
cd "$tree"
PYTHONPATH=server:sandbox GREENLOOP_LLM__CONTEXT_WINDOW=8192 \
  GREENLOOP_LLM__CASSETTE=$out/memo.jsonl GREENLOOP_LLM__CASSETTE_MODE=memo \
  python3 -m greenloop bench --suite realbugs --suite-file "$out/s40.jsonl" --max-iterations 3 --sandbox docker \
    --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b --config benchmarks/configs/second-look.toml \
    --out "$out" >> "$out/bench.log" 2>&1
