"""A clone is enough: no code, test, script or CI step names a folder beside the checkout.

CI also runs the suite with the checkout's siblings hidden (.ci/run), which catches a path built at
run time; this test names the file and line of a path written in the source.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = (".py", ".sh", ".ts", ".js", ".toml", ".cfg", ".ini", ".json", ".yml", ".yaml")
# `../shared`, an absolute /work/... sibling, or a path joined from the checkout's parent
OUTSIDE = re.compile(r"\.\./shared\b|/work/shared\b|parents?\[?\d*\]?\s*/\s*[\"']shared[\"']|\.parent\s*/\s*[\"']shared[\"']")


def outside_paths(files: list[Path], root: Path = ROOT) -> list[str]:
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def tracked_code() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "server", "sandbox", "tests", "benchmarks", ".ci", "vscode-extension",
                            "pyproject.toml"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    here = Path(__file__).resolve()
    return [ROOT / n for n in names
            if (n.endswith(CODE) or n.startswith(".ci/")) and (ROOT / n).resolve() != here and (ROOT / n).is_file()
            and "/data/realbugs/cases/" not in n]


def test_no_source_names_a_folder_beside_the_checkout() -> None:
    assert outside_paths(tracked_code()) == []


def test_the_pattern_finds_each_way_of_writing_it(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('a = ROOT.parent / "shared" / "data"\nb = "../shared/bin"\nc = Path("/work/shared/x")\n'
                     'd = HERE.parents[3] / "shared"\nok = "shared_prefix" + "data/shared"\n')
    assert [line.split(":")[1] for line in outside_paths([probe], tmp_path)] == ["1", "2", "3", "4"]
