"""One case built: the buggy and fixed trees exported, the fail/pass/patched check run, and the case's files written."""
from __future__ import annotations

import gzip
import io
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from realbugs_bugs import git, node_ids
from realbugs_env import all_passed, get_env, run_pytest, sandbox_snapshot, summary
from realbugs_projects import DECLARED, LEFT_OUT, MAX_FILE_BYTES, MIRRORS, PROJECTS, TEST_TOOLS, WORK
from realbugs_truth import is_test_path, truth_of


def export(repo: Path, commit: str, dest: Path) -> None:
    """`git archive commit` into dest, without files of MAX_FILE_BYTES or more, nor LEFT_OUT."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    data = git(repo, "archive", "--format=tar", commit)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = [m for m in tar.getmembers()
                   if not (m.isfile() and m.size >= MAX_FILE_BYTES)
                   and not (m.name + "/").startswith(LEFT_OUT)]
        tar.extractall(dest, members=members, filter="tar")


def pack(src: Path, dest: Path, prefix: str) -> None:
    """Deterministic tar.gz of src, entries under prefix/."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(src.rglob("*")):
            info = tar.gettarinfo(str(path), f"{prefix}/{path.relative_to(src)}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
            else:
                tar.addfile(info)
    with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb",
                                                compresslevel=9, mtime=0) as gz:
        gz.write(buf.getvalue())


# ------------------------------------------------------------------- build
def code_patch(patch: str) -> str:
    """bug_patch.txt without its test files' sections: the workspace has them from the fixed commit."""
    sections = re.split(r"(?m)^(?=diff --git )", patch)
    keep = [x for x in sections if not (m := re.match(r"diff --git a/(\S+)", x)) or not is_test_path(m.group(1))]
    return "".join(keep)


def declared_files(root: Path) -> list[str]:
    """The project's own files that declare its packages, as they are in the workspace."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and len(p.relative_to(root).parts) <= 2
                  and DECLARED.match(p.relative_to(root).as_posix()))


def add_generated(tree: Path, init_files: dict[str, str], repo: Path, commit: str) -> list[str]:
    """Write the files the project's install or setup.sh would make; the ones its .gitignore hides
    are re-included by a `.greenloopignore` (`!name`), as a user would, so the sandbox syncs them."""
    made = [name for name in init_files if not (tree / name).exists()]
    for name in made:
        describe = subprocess.run(["git", "-C", str(repo), "describe", "--tags", commit],
                                  capture_output=True, text=True).stdout.strip()
        (tree / name).write_text(init_files[name].replace("{describe}", describe or "0"))
    synced = sandbox_snapshot(tree)
    hidden = [name for name in made if name not in synced]
    if hidden:
        with open(tree / ".greenloopignore", "a") as fh:
            fh.writelines(f"!{name}\n" for name in hidden)
        made.append(".greenloopignore")
    return made


def build_case(project: str, bug: dict, out_dir: Path, image: str, log) -> tuple[dict | None, str]:
    """(the case, "") when it is kept, else (None, why it was dropped)."""
    cid = bug["id"]
    spec = PROJECTS[project]
    repo = MIRRORS / spec["mirror"] / "repo"
    buggy_c, fixed_c = bug["buggy_commit"], bug["fixed_commit"]
    test_files = bug["test_files"]
    patch = code_patch(bug["patch"])

    buggy, fixed = WORK / "buggy" / cid, WORK / "fixed" / cid
    export(repo, buggy_c, buggy)
    # the bug's tests come from the fixed commit, with the test data the fix commit changed
    # (black's tests/data/*.py cases): every test-folder file of the buggy..fixed diff
    changed = git(repo, "diff", "--name-only", "--no-renames", buggy_c, fixed_c).decode().split()
    for tf in sorted({*test_files, *(p for p in changed if is_test_path(p))}):
        if not git(repo, "ls-tree", "--name-only", fixed_c, "--", tf).strip():
            if (buggy / tf).is_file():
                (buggy / tf).unlink()
            continue
        (buggy / tf).parent.mkdir(parents=True, exist_ok=True)
        (buggy / tf).write_bytes(git(repo, "show", f"{fixed_c}:{tf}"))
    export(repo, fixed_c, fixed)
    generated = sorted(add_generated(buggy, spec.get("init_files", {}), repo, buggy_c))
    add_generated(fixed, spec.get("init_files", {}), repo, fixed_c)
    try:
        tests = bug.get("tests") or node_ids(bug["run_test"], buggy)
    except ValueError as exc:
        return None, f"its test ids do not map to pytest ids ({exc})"

    truth, notes = truth_of(patch, buggy, fixed)
    for note in notes:
        log(f"{cid}: note: {note}")
    if not truth:
        return None, "no def-level truth (the fix is outside any def, or only adds defs)"

    requirements = bug["requirements"]
    env = get_env(image, requirements)
    if not env.ensure():
        return None, f"set-up failed: {env.error}"
    extra_env = spec.get("env", {})
    case_dir = out_dir / "cases" / cid
    rc_b, out_b = run_pytest(env, buggy, tests, extra_env)
    (WORK / "dropped").mkdir(exist_ok=True)
    (WORK / "dropped" / f"{cid}.txt").write_text(f"buggy rc={rc_b}\n{out_b}")
    if rc_b not in (1, 2):
        return None, f"the buggy tree does not fail its tests ({summary(rc_b, out_b)})"
    if bug.get("tests"):  # mined: the changed tests that fail on the buggy tree are the bug's tests
        failing = [t for t in tests if re.search(rf"^(FAILED|ERROR) {re.escape(t)}(\[| |$)", out_b, re.M)]
        if failing and failing != tests:
            log(f"{cid}: tests that pass on the buggy tree left out: {sorted(set(tests) - set(failing))}")
            tests = failing
    rc_f, out_f = run_pytest(env, fixed, tests, extra_env)
    (WORK / "dropped" / f"{cid}.txt").write_text(f"buggy rc={rc_b}\n{out_b}\n\nfixed rc={rc_f}\n{out_f}")
    if rc_f != 0 or not all_passed(out_f, tests):
        return None, f"the fixed tree does not pass ({summary(rc_f, out_f)})"
    # the patch must apply to the buggy workspace and make its tests pass too
    patched = WORK / "patched" / cid
    shutil.rmtree(patched, ignore_errors=True)
    shutil.copytree(buggy, patched, symlinks=True)
    applied = subprocess.run(["patch", "-p1", "-s", "-i", "-"], input=patch, text=True,
                             cwd=patched, capture_output=True).returncode == 0
    if not applied:
        return None, "fix.patch does not apply to the buggy workspace"
    rc_p, out_p = run_pytest(env, patched, tests, extra_env)
    shutil.rmtree(patched, ignore_errors=True)
    log(f"{cid}: buggy rc={rc_b} fixed rc={rc_f} patched rc={rc_p} tests={tests}")
    if rc_p != 0:
        return None, f"the patched buggy tree does not pass ({summary(rc_p, out_p)})"
    case_dir.mkdir(parents=True, exist_ok=True)
    pack(buggy, case_dir / "workspace.tar.gz", cid)
    (case_dir / "failing_output.txt").write_text(out_b)
    (case_dir / "fix.patch").write_text(patch)
    return {"id": cid, "project": project, "repo": spec["repo"],
            "buggy_commit": buggy_c, "fixed_commit": fixed_c, "tests": tests,
            "truth": truth, "requirements": [p for p in env.pins if not any(
                p.startswith(t.split("==")[0] + "==") for t in TEST_TOOLS)],
            "declared": declared_files(buggy), "env": extra_env,
            # how the bench sets the case up: the loop's install route with `requirements`; the
            # files the build added that the project's own install or BugsInPy's setup.sh makes
            "setup": {"route": "requirements", "requested": requirements, "generated": generated},
            "source": {"from": "BugsInPy"} if isinstance(bug.get("run_test"), str) else
            {"from": "git history (mine.py)", "subject": bug.get("subject", "")},
            "python": "3.11"}, ""
