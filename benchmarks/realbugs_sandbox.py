"""Check every realbugs case in the Docker python sandbox: red as the bench sees it, green with fix.patch.

No model. Per case: unpack, install the requirements as the bench does (offline layers), run the
named tests (the bench's red check), apply the developers' fix.patch, run them again. A case that
is red and then green can be fixed in the sandbox; one that is not says why.

    PYTHONPATH=server:sandbox python3 benchmarks/realbugs_sandbox.py [--case ID ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path

from greenloop.bench.realbugs import CASE_TIMEOUT, expected_error, recorded_output, unpack
from greenloop.bench.realbugs_run import not_red
from greenloop.bench.suites import Task, load_suite
from greenloop_sandbox import Limits, open_sandbox, read_tree


async def check(task: Task) -> dict[str, object]:
    archive = Path(task.extra["archive"])
    tests = list(task.extra["tests"])
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="realbugs-check-") as tmp:
        workspace = unpack(archive, Path(tmp), task.id)
        async with open_sandbox("python", backend="docker", limits=Limits(test_case_timeout=CASE_TIMEOUT)) as sb:
            installed = await sb.install(list(task.extra["requirements"]))
            if not installed.ok:
                return {"id": task.id, "installed": False, "why": installed.stderr[-300:]}
            await sb.sync(dict(read_tree(workspace)))
            red = await sb.run_tests(tests, timeout=600)
            patch = ["patch", "-p1", "-s", "-i", str(archive.parent / "fix.patch")]
            await asyncio.to_thread(subprocess.run, patch, cwd=workspace, check=True)
            await sb.sync(dict(read_tree(workspace)))
            green = await sb.run_tests(tests, timeout=600)
    why = not_red(red, sb.template.language.missing_module, expected_error(archive), recorded_output(archive))
    return {"id": task.id, "installed": True, "red": red.summary(), "reproduced": not why, "why": why,
            "fixed_green": green.green, "seconds": round(time.monotonic() - start, 1)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="only these case ids")
    args = parser.parse_args()
    tasks = [t for t in load_suite("realbugs").tasks if not args.case or t.id in args.case]
    rows = []
    for task in tasks:
        row = await check(task)
        rows.append(row)
        print(json.dumps(row), flush=True)
    ok = sum(bool(r.get("reproduced")) and bool(r.get("fixed_green")) for r in rows)
    print(f"{ok} of {len(rows)} cases are red in the sandbox and green with fix.patch")


if __name__ == "__main__":
    asyncio.run(main())
