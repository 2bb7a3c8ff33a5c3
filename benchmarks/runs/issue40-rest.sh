#!/usr/bin/env bash
# What issue 40 still has to measure, in order, one model bench at a time, resumable on any machine (each
# script commits nothing but appends its finished cells to files under docs/benchmarks/): the removal
# reruns left (no-function, then no-small-edits), then the second seed for "no lower" (hef-seed2.sh).
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/issue40-rest.sh OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")
bash "$here/removals.sh" "$out/rm" no-function no-small-edits
bash "$here/hef-seed2.sh" "$out/seed2"
