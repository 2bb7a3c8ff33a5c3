#!/usr/bin/env bash
# What issue 40 still has to measure, in order, one model bench at a time, resumable on any machine (each
# script commits nothing but appends its finished cells to files under docs/benchmarks/): the removal
# reruns left of no-function, the second seed for "no lower" (hef-seed2.sh; first, because a "lower" there
# means code to change), then the no-small-edits removal reruns.
# Needs dockerd and the 1.5B model served on 127.0.0.1:18081.
#   bash benchmarks/runs/issue40-rest.sh OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")
bash "$here/removals.sh" "$out/rm" no-function
bash "$here/hef-seed2.sh" "$out/seed2"
bash "$here/removals.sh" "$out/rm" no-small-edits
