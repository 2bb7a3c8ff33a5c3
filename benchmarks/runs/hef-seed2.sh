#!/usr/bin/env bash
# Issue 40's "no lower", a second seed: the HumanEvalFix 40 tasks the model decides at ef4f42d (before the
# one loop) and fa2b1f6 (after), seed 1301 where the parity run had 1234 (hef-model-versions.sh). Cells:
# docs/benchmarks/one-loop-parity/seed2-{before,after}-cells.jsonl.
#   bash benchmarks/runs/hef-seed2.sh OUT
set -euo pipefail
exec bash "$(dirname "$0")/hef-model-versions.sh" "$1" ef4f42d fa2b1f6 1301 docs/benchmarks/one-loop-parity/seed2
