#!/usr/bin/env bash
# Issue 61's target run: the oracle model through the default loop (5 rounds, Docker sandbox) on every realbugs
# case or every HumanEvalFix task, at one fixed commit. Resumable on any machine: each finished cell is appended
# to docs/benchmarks/oracle-loss/SUITE-COMMIT-cells.jsonl (the bench's results.jsonl, linked), so cells can be
# committed as they finish. realbugs: the case folders not in git are built first from the mirrors (`fetch` the
# projects and BugsInPy first; build.py --missing, about 40 minutes on 2 cores). Then the loss table:
#   PYTHONPATH=server:sandbox:benchmarks python3 benchmarks/oracle_loss.py --suite SUITE OUT/SUITE
# The loss table reads the run store (OUT/SUITE/.bench/runs.sqlite3, not committed): run it on the machine
# that ran the cells. Keep the machine otherwise quiet: a loaded machine times tests out and changes outcomes.
#   bash benchmarks/runs/oracle-target.sh OUT realbugs|humanevalfix
set -euo pipefail
commit=0f95d1b
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1"); suite=$2
tree=$out/tree-$commit
[[ -d $tree ]] || git -C "$repo" worktree add --detach "$tree" $commit
cells=$repo/docs/benchmarks/oracle-loss/$suite-$commit-cells.jsonl
run=$out/$suite
mkdir -p "$run/.bench"
case $suite in
  realbugs)
    data=$repo/benchmarks/data/realbugs
    if (cd "$data" && python3 - <<'PY'
import json, sys
from pathlib import Path
ids = [json.loads(l)["id"] for l in Path("cases.jsonl").open() if l.strip()]
sys.exit(0 if all((Path("cases") / i / "workspace.tar.gz").is_file() for i in ids) else 1)
PY
    ); then :; else  # rebuilt rows and sums differ only in volatile fields: keep the committed ones
      (cd "$data" && python3 build.py --missing)
      git -C "$repo" checkout -- benchmarks/data/realbugs/cases.jsonl benchmarks/data/realbugs/drops.jsonl \
        benchmarks/data/realbugs/baselines.json \
        benchmarks/data/realbugs/SHA256SUMS
    fi
    cp "$data/cases.jsonl" "$run/suite.jsonl"
    ln -sfn "$data/cases" "$run/cases" ;;
  humanevalfix)
    cp "$repo/benchmarks/data/humanevalfix/humanevalfix-python.jsonl" "$run/suite.jsonl" ;;
  *) echo "SUITE is realbugs or humanevalfix" >&2; exit 2 ;;
esac
touch "$cells"
ln -sf "$cells" "$run/.bench/results.jsonl"
cd "$tree"
PYTHONPATH=server:sandbox python3 -m greenloop bench --suite "$suite" --suite-file "$run/suite.jsonl" \
  --model oracle --sandbox docker --jobs 2 --config benchmarks/configs/plain.toml --out "$run" >> "$run/bench.log" 2>&1
