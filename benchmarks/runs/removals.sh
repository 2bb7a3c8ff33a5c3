#!/usr/bin/env bash
# The removal reruns of issue 40 (docs/benchmarks/ablation/plan.txt), part by part, at fa2b1f6 (the commit of
# the baselines and of the cells already run), resumable on any machine: each finished cell is appended to
# docs/benchmarks/ablation/removal-cells/<part>-<suite>.jsonl (the bench's results.jsonl, committed), and a new
# run starts from those. Needs dockerd and the 1.5B model served on 127.0.0.1:18081 (docs/benchmarks/ablation).
#   bash benchmarks/runs/removals.sh OUT no-function no-small-edits
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1"); shift
tree=$out/tree-fa2b1f6
[[ -d $tree ]] || git -C "$repo" worktree add --detach "$tree" fa2b1f6
keep=$repo/docs/benchmarks/ablation/removal-cells
mkdir -p "$keep"
for part in "$@"; do
  for suite in humanevalfix realbugs; do
    rows=$repo/benchmarks/data/humanevalfix/humanevalfix-python.jsonl
    [[ $suite == realbugs ]] && rows=$repo/benchmarks/data/realbugs/cases.jsonl
    cell=$out/$part-$suite
    mkdir -p "$cell/.bench"
    tasks=$(PYTHONPATH=$repo/server:$repo/sandbox:$repo/benchmarks python3 - "$repo" "$part" "$suite" "$rows" \
      "$cell/tasks.jsonl" <<'PY'
import re, sys
from pathlib import Path
from ablation_plan import cut_suite
repo, part, suite, source, dest = sys.argv[1:]
plan = (Path(repo) / "docs/benchmarks/ablation/plan.txt").read_text()
block = plan.split(f"\n{part}:")[1].split("\n\n")[0]
found = re.search(rf"^  {suite}: (.*)$", block, re.M)
tasks = {t.split(" (")[0] for t in found.group(1).split(", ")} if found else set()
print(cut_suite([Path(source)], suite, tasks, Path(dest)) if tasks else 0)
PY
)
    [[ $tasks -gt 0 ]] || continue
    touch "$keep/$part-$suite.jsonl"
    ln -sf "$keep/$part-$suite.jsonl" "$cell/.bench/results.jsonl"  # finished cells land in the repository
    (cd "$tree" && PYTHONPATH=server:sandbox GREENLOOP_LLM__CONTEXT_WINDOW=8192 \
      GREENLOOP_LLM__CASSETTE=$cell/memo.jsonl GREENLOOP_LLM__CASSETTE_MODE=memo \
      python3 -m greenloop bench --suite "$suite" --suite-file "$cell/tasks.jsonl" --max-iterations 3 \
        --sandbox docker --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b \
        --config "benchmarks/configs/ablation/$part.toml" --out "$cell") >> "$cell/bench.log" 2>&1
  done
done
