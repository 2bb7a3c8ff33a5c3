"""Per cell of a bench folder (argument): its rounds (why, how ended), model calls by step and their completion tokens.

Usage: python3 rounds.py BENCH_OUT_DIR (read-only)."""
import collections
import json
import sqlite3
import sys

c = sqlite3.connect(f"file:{sys.argv[1]}/.bench/runs.sqlite3?mode=ro", uri=True)
RUNS = "select id, config_name, workspace, outcome, prompt_tokens, completion_tokens from runs order by started_at"
for rid, cfg, ws, outcome, pt, ct in c.execute(RUNS):
    case = ws.rstrip('/').split('/')[-1]
    print(f"\n{cfg} {case} {outcome} prompt={pt} completion={ct}")
    for (data,) in c.execute("select data from events where run_id=? and kind='round_ended' order by seq", (rid,)):
        d = json.loads(data)
        print("   round:", d.get("why"), "|", d.get("ended"), "| tried", d.get("tried"))
    steps: collections.Counter[str] = collections.Counter()
    toks: collections.Counter[str] = collections.Counter()
    for step, ctok in c.execute("select step, completion_tokens from calls where run_id=?", (rid,)):
        steps[step] += 1
        toks[step] += ctok or 0
    print("   calls:", dict(steps), "completion:", dict(toks))
    tested = [json.loads(d) for (d,) in c.execute(
        "select data from events where run_id=? and kind='candidate_tested'", (rid,))]
    rejected = [t["reason"] for t in tested if t.get("status") == "rejected" and t.get("route") == "region"]
    if rejected:
        print("   region rejected:", collections.Counter(r[:90] for r in rejected).most_common(3))
