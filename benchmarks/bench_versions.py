"""One bench at two commits, task by task in turn, so "no lower than before the change" is one run.

A config can switch a part of the loop off, not the code it runs. To compare the code before a change
with the code after it on the same machine, model server, load and memo, this runs `greenloop bench`
from a worktree of each commit, one task at a time: the first commit's cells of task 1, the second's,
then task 2, and so on. Each commit writes its own bench folder (resumable: a rerun skips the cells it
has), and at the end each folder's report covers the whole suite (`--report-only`).

    PYTHONPATH=server:sandbox python benchmarks/bench_versions.py --before ef4f42d --after HEAD \\
        --out /tmp/versions --suite-file hef40.jsonl -- --suite humanevalfix --max-iterations 3 \\
        --sandbox docker --base-url http://127.0.0.1:18081/v1 --model qwen2.5-coder-1.5b \\
        --config benchmarks/configs/second-look.toml

With `GREENLOOP_LLM__CASSETTE=memo.jsonl GREENLOOP_LLM__CASSETTE_MODE=memo` set, both commits share one
memo: a request either commit sent before is served (and charged its recorded seconds). `--config`
paths are read inside each worktree, so each commit runs its own copy of the named config.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worktree(out: Path, commit: str) -> Path:
    """A detached worktree of `commit` under OUT/trees (made once, reused on a rerun)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", commit], check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = out / "trees" / sha
    if not tree.is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), sha], check=True)
    return tree


def task_files(suite_file: Path, out: Path) -> list[Path]:
    """One suite file per line of SUITE_FILE, beside a `cases` link where the suite has case folders."""
    folder = out / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    cases = suite_file.resolve().parent / "cases"
    if cases.is_dir() and not (folder / "cases").exists():
        (folder / "cases").symlink_to(cases)
    paths = []
    for n, line in enumerate(ln for ln in suite_file.read_text("utf-8").splitlines() if ln.strip()):
        path = folder / f"{n:03d}.jsonl"
        path.write_text(line + "\n", "utf-8")
        paths.append(path)
    return paths


def bench(tree: Path, args: list[str], suite_file: Path, out: Path, *extra: str) -> int:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'server'}{os.pathsep}{tree / 'sandbox'}"}
    command = [sys.executable, "-m", "greenloop", "bench", *args, "--suite-file", str(suite_file),
               "--out", str(out), *extra]
    return subprocess.run(command, cwd=tree, env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit before the change (the baseline)")
    parser.add_argument("--after", default="HEAD", help="the commit after it (default HEAD)")
    parser.add_argument("--suite-file", type=Path, required=True, help="the suite's JSONL, one task a line")
    parser.add_argument("--out", type=Path, required=True, help="OUT/before, OUT/after: the two bench folders")
    ns = parser.parse_args(argv[:split])
    bench_args = argv[split + 1:]
    out: Path = ns.out.resolve()
    trees = {"before": worktree(out, ns.before), "after": worktree(out, ns.after)}
    for path in task_files(ns.suite_file, out):
        for label, tree in trees.items():
            code = bench(tree, bench_args, path, out / label)
            if code != 0:
                print(f"{label} at {tree.name} on {path.name}: greenloop bench exited {code}", file=sys.stderr)
                return code
    for label, tree in trees.items():
        bench(tree, bench_args, ns.suite_file.resolve(), out / label, "--report-only")
    print(f"reports: {out / 'before'} and {out / 'after'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
