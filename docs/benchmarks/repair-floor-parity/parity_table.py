"""Before/after cells of a bench_versions run, task by task: outcome, verdict, tokens; differences listed."""
import json, sys
from collections import Counter
out = sys.argv[1]
def cells(label):
    rows = {}
    for l in open(f"{out}/{label}/.bench/results.jsonl"):
        r = json.loads(l)
        rows[(r["task"], r["config"])] = r
    return rows
b, a = cells("before"), cells("after")
same = diff = 0
summary = Counter()
for key in sorted(set(b) & set(a)):
    rb, ra = b[key], a[key]
    vb = (rb["extra"].get("verdict") or {}).get("name"); va = (ra["extra"].get("verdict") or {}).get("name")
    tb = rb["prompt_tokens"] + rb["completion_tokens"]; ta = ra["prompt_tokens"] + ra["completion_tokens"]
    for label, r, v in (("before", rb, vb), ("after", ra, va)):
        summary[(label, key[1], "green")] += r["outcome"] == "green"
        summary[(label, key[1], "right")] += v in ("same", "equivalent")
        summary[(label, key[1], "cells")] += 1
    if (rb["outcome"], vb, tb) == (ra["outcome"], va, ta):
        same += 1
    else:
        diff += 1
        print("differs:", key, rb["outcome"], vb, tb, "|", ra["outcome"], va, ta)
print(f"paired cells: {same + diff}, identical (outcome, verdict, tokens): {same}, differ: {diff}")
for config in sorted({k[1] for k in summary}):
    for label in ("before", "after"):
        print(label, config, {k: summary[(label, config, k)] for k in ("cells", "green", "right")})
print("only before:", sorted(set(b) - set(a))[:5], "only after:", sorted(set(a) - set(b))[:5])
