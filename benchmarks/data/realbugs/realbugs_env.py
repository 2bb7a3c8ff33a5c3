"""Running a case's tests: the requirement sets' image layers (Env) and pytest in a container with no network."""
from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from realbugs_projects import RUN_SECONDS, TEST_TOOLS, WORK


# ------------------------------------------------------------------- tests
def default_image() -> str:
    """The greenloop python sandbox image's tag (as greenloop_sandbox names it)."""
    root = Path(__file__).resolve().parents[3]
    sys.path[:0] = [str(root / "sandbox")]
    from greenloop_sandbox.images import template_tag
    from greenloop_sandbox.templates import load_template

    return template_tag(load_template("python"))


class Env:
    """One requirement set: its wheels resolved on the host, installed offline in an image layer."""

    def __init__(self, base: str, requirements: list[str]):
        self.requirements = sorted(set(requirements))
        key = hashlib.sha256("\n".join([base, *TEST_TOOLS, *self.requirements]).encode()).hexdigest()[:16]
        self.tag = f"greenloop/realbugs:{key}"
        self.base, self.wheels, self.error = base, WORK / "wheels" / key, ""
        self.pins: list[str] = []  # name==version of every wheel installed, the closure

    def ensure(self) -> bool:
        if self.wheels.is_dir() and (self.wheels / "pins.txt").is_file():
            self.pins = (self.wheels / "pins.txt").read_text().split()
        else:
            shutil.rmtree(self.wheels, ignore_errors=True)
            self.wheels.mkdir(parents=True)
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                 "--only-binary=:all:", "--python-version", "3.11", "-d", str(self.wheels),
                 *TEST_TOOLS, *self.requirements], capture_output=True, text=True, timeout=900)
            if proc.returncode:
                # pip's ERROR lines say why; its warnings (e.g. about a configured index) do not
                errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR:")]
                self.error = "no Python 3.11 wheels: " + " ".join(
                    " ".join(errors or proc.stderr.splitlines()).split())[-400:]
                shutil.rmtree(self.wheels)
                return False
            self.pins = sorted(wheel_pin(w.name) for w in self.wheels.glob("*.whl"))
            (self.wheels / "pins.txt").write_text("\n".join(self.pins) + "\n")
        if subprocess.run(["docker", "image", "inspect", self.tag], capture_output=True).returncode:
            ctx = self.wheels
            (ctx / "Dockerfile").write_text(
                f"FROM {self.base}\nUSER root\nCOPY *.whl /opt/realbugs/wheels/\n"
                "RUN python3 -m pip install --no-index --find-links /opt/realbugs/wheels "
                "--break-system-packages --disable-pip-version-check -q /opt/realbugs/wheels/*.whl"
                " && rm -rf /opt/realbugs/wheels\nUSER sandbox\n")
            proc = subprocess.run(["docker", "build", "-q", "--network", "none", "-t", self.tag, str(ctx)],
                                  capture_output=True, text=True, timeout=1800)
            if proc.returncode:
                self.error = "offline install failed: " + " ".join(proc.stderr.split())[-400:]
                return False
        return True


def wheel_pin(filename: str) -> str:
    name, version = filename.split("-")[:2]
    return f"{name.replace('_', '-').lower()}=={version}"


def run_pytest(env: Env, root: Path, tests: list[str], extra_env: dict[str, str]) -> tuple[int, str]:
    """The tests in a fresh container with no network: the tree is copied in on stdin, nothing out."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for rel, data in sorted(sandbox_snapshot(root).items()):  # what the bench's sandbox gets
            info = tarfile.TarInfo(rel)
            info.size, info.mode = len(data), (root / rel).stat().st_mode & 0o777
            tar.addfile(info, io.BytesIO(data))
    name = f"realbugs-{os.getpid()}-{root.name}-{root.parent.name}"
    pytest = " ".join(["python3 -m pytest -p no:cacheprovider --timeout=60",
                       *(f"'{t}'" for t in tests)])
    script = ("mkdir -p /tmp/home && tar -xzf - -C /workspace && cd /workspace && "
              f"exec timeout -s KILL {RUN_SECONDS} {pytest}")
    cmd = ["docker", "run", "--rm", "-i", "--name", name, "--network", "none", "--cpus", "1",
           "--memory", "3g", "--pids-limit", "512", "-e", "HOME=/tmp/home", "-e", "LC_ALL=C.UTF-8",
           "-e", "PYTHONDONTWRITEBYTECODE=1",
           *(x for k, v in extra_env.items() for x in ("-e", f"{k}={v}")), env.tag, "sh", "-c", script]
    try:
        proc = subprocess.run(cmd, input=buf.getvalue(), capture_output=True, timeout=RUN_SECONDS + 120)
        rc = proc.returncode
        out = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
    except subprocess.TimeoutExpired as exc:
        rc, out = 124, f"timeout\n{(exc.stdout or b'').decode('utf-8', errors='replace')}"
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    if rc == 137:
        rc, out = 124, f"timeout ({RUN_SECONDS} s, killed)\n{out}"
    return rc, out


def all_passed(out: str, tests: list[str]) -> bool:
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    m = re.search(r"(\d+) passed", tail)
    return bool(m) and int(m.group(1)) >= len(tests) and not re.search(
        r"skipped|deselected|xfail|error", tail)


def summary(rc: int, out: str) -> str:
    """A one-line why of a test run: its exit, first error line and pytest's last line."""
    lines = [line for line in out.strip().splitlines() if line.strip()]
    first = next((x for x in lines if re.match(r"^E\s+\S", x) or "Error" in x[:60]), "")
    tail = lines[-1].strip("= ") if lines else ""
    return f"exit {rc}: {first.strip()[:160]}{' | ' if first else ''}{tail[:120]}"


ENVS: dict[str, Env] = {}


def get_env(image: str, requirements: list[str]) -> Env:
    env = Env(image, requirements)
    return ENVS.setdefault(env.tag, env)


def sandbox_snapshot(root: Path) -> dict[str, bytes]:
    """What greenloop's sandbox would sync of `root` (its ignore rules, size limit, no symlinks out)."""
    sandbox = str(Path(__file__).resolve().parents[3] / "sandbox")
    if sandbox not in sys.path:
        sys.path.insert(0, sandbox)
    from greenloop_sandbox import read_tree

    return dict(read_tree(root))
