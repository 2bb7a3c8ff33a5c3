"""The two localization baselines over the kept cases (deepest frame, BM25 over defs), written to baselines.json."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import tarfile
from collections import Counter
from pathlib import Path

from realbugs_projects import WORK
from realbugs_truth import Def, defs_of, innermost, is_test_path, read_text


# --------------------------------------------------------------- baselines
def tokens(text: str) -> list[str]:
    out: list[str] = []
    for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        for part in ident.split("_"):
            out.extend(p.lower() for p in re.findall(
                r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", part))
    return out


def hit(item: tuple[str, str], truth: list[dict]) -> bool:
    path, sym = item
    return any(path == t["path"] and (sym == t["symbol"] or sym.endswith("." + t["symbol"])
                                      or t["symbol"].endswith("." + sym)) for t in truth)


def workspace_defs(root: Path) -> tuple[list[Def], dict[str, list[str]]]:
    """The baselines' defs and lines: every non-test .py file of the unpacked workspace at `root`."""
    return source_defs({rel: read_text(f) for f in sorted(root.rglob("*.py"))
                        if not is_test_path(rel := f.relative_to(root).as_posix())})


def source_defs(sources: dict[str, str]) -> tuple[list[Def], dict[str, list[str]]]:
    """Defs and lines of the non-test files of `sources` (relative path -> text); a file `ast` cannot
    parse is left out. benchmarks/realbugs.py calls it on a workspace read from its tarball."""
    defs: list[Def] = []
    lines: dict[str, list[str]] = {}
    for rel, src in sources.items():
        if is_test_path(rel):
            continue
        try:
            found = defs_of(src, rel)
        except SyntaxError:
            continue
        defs.extend(found)
        lines[rel] = src.splitlines()
    return defs, lines


FRAME = re.compile(r"^(\S+?\.py):(\d+): ", re.M)
SECTION = re.compile(r"^_{3,} .* _{3,}$", re.M)


def deepest_frame(output: str, root: Path, defs: list[Def]) -> tuple[str, str] | None:
    """Deepest non-test frame (inside a def) of the first failure that has one."""
    by_path: dict[str, list[Def]] = {}
    for d in defs:
        by_path.setdefault(d.path, []).append(d)
    for section in SECTION.split(output)[1:]:
        best = None
        for m in FRAME.finditer(section):
            path = m.group(1)
            if path.startswith("/workspace/"):  # the container's workspace root
                path = path[len("/workspace/"):]
            elif os.path.isabs(path):
                try:
                    path = Path(path).relative_to(root).as_posix()
                except ValueError:
                    continue
            if is_test_path(path) or path not in by_path:
                continue
            d = innermost(by_path[path], int(m.group(2)))
            if d:
                best = (d.path, d.symbol)
        if best:
            return best
    return None


def bm25_rank(query: str, defs: list[Def], lines: dict[str, list[str]],
              k1: float = 1.5, b: float = 0.75) -> list[tuple[str, str]]:
    docs = [Counter(tokens(f"{d.path} {d.symbol} " + "\n".join(
        lines[d.path][d.first - 1:d.end]))) for d in defs]
    lengths = [sum(c.values()) for c in docs]
    avg = sum(lengths) / len(lengths)
    df: Counter = Counter()
    for c in docs:
        df.update(c.keys())
    terms = set(tokens(query))
    n = len(docs)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in sorted(terms) if df[t]}  # sorted: one sum order
    scores = []
    for i, c in enumerate(docs):
        s = 0.0
        for t, w in idf.items():
            tf = c.get(t, 0)
            if tf:
                s += w * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
        scores.append((-s, defs[i].path, defs[i].start, i))
    scores.sort()
    return [(defs[i].path, defs[i].symbol) for _, _, _, i in scores]


def baselines(out_dir: Path, cases: list[dict], log) -> dict:
    rows = []
    for case in cases:
        cid = case["id"]
        root = WORK / "baseline" / cid
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        with tarfile.open(out_dir / "cases" / cid / "workspace.tar.gz") as tar:
            tar.extractall(root.parent, filter="tar")
        output = (out_dir / "cases" / cid / "failing_output.txt").read_text()
        defs, lines = workspace_defs(root)
        frame = deepest_frame(output, root, defs)
        ranked = bm25_rank(output, defs, lines)
        rank = next((i + 1 for i, item in enumerate(ranked) if hit(item, case["truth"])), None)
        rows.append({"id": cid, "defs": len(defs),
                     "frame": list(frame) if frame else None,
                     "frame_hit": bool(frame and hit(frame, case["truth"])),
                     "bm25_top3": [list(x) for x in ranked[:3]], "bm25_rank": rank})
        log(f"{cid}: defs={len(defs)} frame={frame} hit={rows[-1]['frame_hit']} bm25 rank={rank}")
        shutil.rmtree(root)
    total = len(rows)
    summary = {
        "cases": total,
        "frame_top1": sum(r["frame_hit"] for r in rows),
        "frame_any": sum(r["frame"] is not None for r in rows),
        "bm25_top1": sum(r["bm25_rank"] == 1 for r in rows),
        "bm25_top3": sum(r["bm25_rank"] is not None and r["bm25_rank"] <= 3 for r in rows),
        "per_case": rows,
    }
    (out_dir / "baselines.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
