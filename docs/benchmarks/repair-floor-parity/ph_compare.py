"""HEAD's parity cells (ph/out) against versions/after (5750392), by task and config: outcome, verdict, tokens."""
import json
after = {}
for l in open('/work/bench/versions/after/.bench/results.jsonl'):
    r = json.loads(l); after[(r['task'], r['config'])] = r
same = diff = 0
tot = {}
for l in open('/work/bench/ph/out/.bench/results.jsonl'):
    r = json.loads(l); c = r['config'].replace('parity-', '')
    a = after[(r['task'], c)]
    mine = (r['outcome'], (r['extra'].get('verdict') or {}).get('name'), r['prompt_tokens'] + r['completion_tokens'])
    theirs = (a['outcome'], (a['extra'].get('verdict') or {}).get('name'), a['prompt_tokens'] + a['completion_tokens'])
    for label, t in (('head', mine), ('5750392', theirs)):
        k = tot.setdefault((label, c), [0, 0, 0]); k[0] += 1; k[1] += t[0] == 'green'; k[2] += t[1] in ('same', 'equivalent')
    if mine == theirs: same += 1
    else: diff += 1; print('differs', r['task'], c, mine, theirs)
print(f'paired {same + diff}, identical {same}, differ {diff}')
for k, v in sorted(tot.items()): print(k, 'cells, green, right =', v)
