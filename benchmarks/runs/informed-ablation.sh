#!/usr/bin/env bash
# Issue 62's informed-requests ablation, first stage, with the 1.5B model: the default loop (plain.toml) against
# it without the three informed-request items (ablation/no-informed-requests.toml), task by task in one bench
# (configs interleaved), at one fixed commit, one memo. PART picks the set:
#   rb20   the realbugs 20 of the one-loop parity run (all in git)
#   s40    realbugs' stratified 40 (--sample 40 --sample-seed 0 --stratify project over all 164 rows; the
#          folders not in git are built first from the mirrors: `fetch` the projects first)
#   hef40  the HumanEvalFix 40 of the one-loop parity run
# Tasks run cheapest first (by that parity run's seconds), so a run stopped part-way has compared the most tasks.
# Resumable on any machine: each finished cell is appended to docs/benchmarks/informed-requests-qwen1.5b/
# PART-cells.jsonl (the bench's results.jsonl, linked), so cells can be committed as they finish.
# plain.toml at this commit is also issue 61's "today" baseline for the model's right greens.
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/informed-ablation.sh OUT PART
set -euo pipefail
commit=0f95d1b
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1"); part=$2
tree=$out/tree-$commit
[[ -d $tree ]] || git -C "$repo" worktree add --detach "$tree" $commit
data=$repo/benchmarks/data/realbugs
parity=$repo/docs/benchmarks/one-loop-parity
cells=$repo/docs/benchmarks/informed-requests-qwen1.5b/$part-cells.jsonl
run=$out/$part
mkdir -p "$run/.bench" "$(dirname "$cells")"
case $part in
  rb20|hef40)
    if [[ $part == rb20 ]]; then suite=realbugs; rows=$data/cases.jsonl; key=id; done_run=$parity/rb20-after-fa2b1f6.json
    else suite=humanevalfix; rows=$repo/benchmarks/data/humanevalfix/humanevalfix-python.jsonl; key=task_id
         done_run=$parity/after-fa2b1f6.json; fi
    python3 - "$rows" "$key" "$done_run" "$run/suite.jsonl" <<'PY'
import json, sys
from pathlib import Path
rows, key, done, dest = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
order = [r["task"] for r in sorted(json.loads(done.read_text())["results"], key=lambda r: r["seconds"])]
lines = {json.loads(l)[key]: l for l in rows.read_text().splitlines() if l.strip()}
dest.write_text("".join(lines[t] + "\n" for t in order))
PY
    ;;
  s40)
    suite=realbugs
    bash "$repo/benchmarks/runs/s40-suite.sh" "$run/suite.jsonl"
    ;;
  *) echo "PART is rb20, s40 or hef40" >&2; exit 2 ;;
esac
[[ $suite == realbugs ]] && ln -sfn "$data/cases" "$run/cases"
touch "$cells"
ln -sf "$cells" "$run/.bench/results.jsonl"
cd "$tree"
PYTHONPATH=server:sandbox GREENLOOP_LLM__CONTEXT_WINDOW=8192 \
  GREENLOOP_LLM__CASSETTE=$out/memo.jsonl GREENLOOP_LLM__CASSETTE_MODE=memo \
  python3 -m greenloop bench --suite $suite --suite-file "$run/suite.jsonl" --max-iterations 3 --sandbox docker \
    --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b \
    --config benchmarks/configs/plain.toml --config benchmarks/configs/ablation/no-informed-requests.toml \
    --out "$run" >> "$run/bench.log" 2>&1
