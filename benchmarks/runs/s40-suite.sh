#!/usr/bin/env bash
# realbugs' stratified sample of 40 (--sample 40 --sample-seed 0 --stratify project over all 164 rows) written to
# DEST as a suite file; the sample's case folders not in git are built first from the mirrors (build.py --only;
# `fetch` the projects first). Called by s40-model.sh and informed-ablation.sh:
#   bash benchmarks/runs/s40-suite.sh DEST
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(realpath -m "$1")
data=$repo/benchmarks/data/realbugs
missing=$(cd "$repo" && PYTHONPATH=server:sandbox python3 - "$data" "$dest" <<'PY'
import json, sys, tempfile
from pathlib import Path
from greenloop.bench.suites import load_suite
data, dest = Path(sys.argv[1]), Path(sys.argv[2])
rows = {json.loads(l)["id"]: l.rstrip("\n") + "\n" for l in (data / "cases.jsonl").open() if l.strip()}
with tempfile.TemporaryDirectory() as tmp:  # every row as usable: the sample is over the whole set
    (Path(tmp) / "cases.jsonl").write_text("".join(rows.values()))
    for case in rows:
        (Path(tmp) / "cases" / case).mkdir(parents=True)
        (Path(tmp) / "cases" / case / "workspace.tar.gz").touch()
    ids = [t.id for t in load_suite("realbugs", Path(tmp) / "cases.jsonl", sample=40, sample_seed=0,
                                    stratify="project").tasks]
dest.write_text("".join(rows[i] for i in ids))
print(",".join(i for i in ids if not (data / "cases" / i / "workspace.tar.gz").is_file()))
PY
)
if [[ -n $missing ]]; then  # the rebuilt rows and output sums differ only in volatile fields: keep the committed ones
  (cd "$data" && python3 build.py --only "$missing")
  git -C "$repo" checkout -- benchmarks/data/realbugs/cases.jsonl benchmarks/data/realbugs/SHA256SUMS
fi
