"""Where the bugs come from: git on the mirrors, BugsInPy's bug files and mine.py's rows, with their requirements."""
from __future__ import annotations

import ast
import contextlib
import re
import subprocess
from pathlib import Path

from realbugs_projects import BUGSINPY, MINE, MIRRORS, PROJECTS
from realbugs_truth import is_test_path


# ---------------------------------------------------------------- git helpers
def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True,
                          capture_output=True).stdout


def bugsinpy_file(project: str, n: int, name: str) -> str:
    return git(BUGSINPY, "show", f"HEAD:projects/{project}/bugs/{n}/{name}").decode()


def bug_numbers(project: str) -> list[int]:
    out = git(BUGSINPY, "ls-tree", "--name-only", "HEAD", f"projects/{project}/bugs/")
    return sorted(int(Path(p).name) for p in out.decode().split())


# ------------------------------------------------------------- bug metadata
def parse_info(text: str) -> dict[str, str]:
    return {k.strip(): v for k, v in re.findall(r'^\s*(\w+)\s*=\s*"([^"]*)"', text, re.M)}


def node_ids(run_test: str, root: Path) -> list[str]:
    """Failing tests of run_test.sh as pytest node ids."""
    ids: list[str] = []
    for line in run_test.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for tok in line.split():
            if tok.startswith("-") or tok in {"python", "python3", "unittest",
                                              "pytest", "py.test", "tox"}:
                continue
            if "::" in tok or tok.endswith(".py"):
                ids.append(tok)
            else:  # unittest dotted id: test.test_utils.TestUtil.test_x
                parts = tok.split(".")
                for i in range(len(parts), 0, -1):
                    mod = "/".join(parts[:i]) + ".py"
                    if (root / mod).is_file():
                        ids.append("::".join([mod, *parts[i:]]))
                        break
                else:
                    raise ValueError(f"cannot map {tok}")
    return ids


def bugsinpy_requirements(project: str, n: int) -> dict[str, str]:
    """normalised name -> pinned spec, from the bug's BugsInPy requirements.txt (UTF-8 or UTF-16)."""
    try:
        data = git(BUGSINPY, "show", f"HEAD:projects/{project}/bugs/{n}/requirements.txt")
    except subprocess.CalledProcessError:
        return {}
    text = data.decode("utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else data.decode()
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)==([\w.]+)\s*$", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1).lower())] = f"{m.group(1)}=={m.group(2)}"
    return pins


def case_requirements(project: str, n: int) -> list[str]:
    spec = PROJECTS[project]
    pins = bugsinpy_requirements(project, n)
    extra = [pins.get(name, name) for name in spec.get("bugsinpy_pins", [])]
    return [*spec["requirements"], *extra]


def bugsinpy_bug(project: str, n: int) -> dict:
    """A BugsInPy bug: its commits, test files, fix (bug_patch.txt), run_test.sh and requirements."""
    info = parse_info(bugsinpy_file(project, n, "bug.info"))
    return {"id": f"{project}-{n}", "buggy_commit": info["buggy_commit_id"],
            "fixed_commit": info["fixed_commit_id"],
            "test_files": [t for t in info.get("test_file", "").split(";") if t],
            "patch": bugsinpy_file(project, n, "bug_patch.txt"),
            "run_test": bugsinpy_file(project, n, "run_test.sh"),
            "requirements": case_requirements(project, n)}


def mined_bug(row: dict) -> dict:
    """A bug of mined.jsonl: the fix is the commit's diff of its non-test Python files; the tests
    are the test defs it added or changed; the requirements are MINE's, plus the fixed commit's
    declared dependencies where MINE says `declared`."""
    project = row["project"]
    repo = MIRRORS / PROJECTS[project]["mirror"] / "repo"
    buggy_c, fixed_c = row["buggy_commit"], row["fixed_commit"]
    names = git(repo, "diff", "--name-only", "--no-renames", buggy_c, fixed_c).decode().split()
    code = [p for p in names if p.endswith(".py") and not is_test_path(p)]
    patch = git(repo, "diff", "--no-renames", buggy_c, fixed_c, "--", *code).decode()
    requirements = list(MINE[project]["requirements"])
    if MINE[project].get("declared"):
        requirements += declared_dependencies(repo, fixed_c)
    config = pytest_config(repo, fixed_c)
    for word, extra in MINE[project].get("if_configured", {}).items():
        requirements += extra if word in config else []
    for date, extra in MINE[project].get("before", {}).items():  # pins of a fix's era
        requirements += extra if row["date"] < date else []
    for start, end, extra in MINE[project].get("between", []):  # pins of a span of fixes
        requirements += extra if start <= row["date"] < end else []
    return {**row, "patch": patch, "requirements": requirements}


def stale_rows(cases: list[dict], mined: list[dict], log) -> list[str]:
    """The ids of the rows whose `setup.requested` is not what this script asks for them now: a
    row an earlier version built (its MINE pins or declared-dependency reading changed since), so a
    rebuild from the mirrors would not give the same row. Imported rows keep their earlier build's."""
    by_id = {row["id"]: row for row in mined}
    out = []
    for case in cases:
        cid, project = case["id"], case["project"]
        if "verified_by" in case:
            continue
        bug = mined_bug(by_id[cid]) if cid in by_id else bugsinpy_bug(project, int(cid.rsplit("-", 1)[1]))
        if bug["requirements"] != case["setup"]["requested"]:
            log(f"{cid}: stale: asks {bug['requirements']} now, the row {case['setup']['requested']}")
            out.append(cid)
    return out


def pytest_config(repo: Path, commit: str) -> str:
    """The text of the commit's files that can hold pytest's configuration."""
    text = ""
    for name in ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini"):
        with contextlib.suppress(subprocess.CalledProcessError):  # the commit has no such file
            text += git(repo, "show", f"{commit}:{name}").decode(errors="replace")
    return text


def declared_dependencies(repo: Path, commit: str) -> list[str]:
    """The commit's declared dependencies: pyproject.toml's [project].dependencies, or flit's older
    [tool.flit.metadata].requires, or else setup.py's literal `install_requires` list (read, not
    run); none if it has none of these."""
    import tomllib

    try:
        data = tomllib.loads(git(repo, "show", f"{commit}:pyproject.toml").decode())
    except (subprocess.CalledProcessError, tomllib.TOMLDecodeError):
        data = {}
    flit = data.get("tool", {}).get("flit", {}).get("metadata", {})
    found = data.get("project", {}).get("dependencies", flit.get("requires"))
    if found is not None:
        return [str(d) for d in found]
    try:
        tree = ast.parse(git(repo, "show", f"{commit}:setup.py"))
    except (subprocess.CalledProcessError, SyntaxError):
        return []
    # `setup(install_requires=[...])`, or `setup(install_requires=name)` with `name = [...]`
    names: dict[str, ast.expr] = {}
    for node in ast.walk(tree):  # a name's first assignment (later ones may add conditionally)
        for t in node.targets if isinstance(node, ast.Assign) else []:
            if isinstance(t, ast.Name):
                names.setdefault(t.id, node.value)
    for node in ast.walk(tree):
        for k in getattr(node, "keywords", []):
            value = names.get(k.value.id) if isinstance(k.value, ast.Name) else k.value
            if k.arg == "install_requires" and isinstance(value, ast.List | ast.Tuple) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
                return [e.value for e in value.elts]
    return []
