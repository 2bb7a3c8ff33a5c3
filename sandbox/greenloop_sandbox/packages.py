"""Package installs without network in the sandbox: fetch files on the host, then install offline.

No package code runs on the host. `resolve_argv` fetches an npm or cargo package set into a folder
(`npm install --ignore-scripts`: no lifecycle scripts; `cargo vendor`: sources only, no build
scripts); pip's wheelhouse is pip_resolve.py's (wheels only, sdists built in a container).
`layer_dockerfile` installs that folder into a new image layer with no network.
`local_install_argv` is the local backend's equivalent (into the sandbox folder, wheels only).
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from greenloop_sandbox.output import cap_text
from greenloop_sandbox.values import ExecResult, SandboxError

_SAFE = re.compile(r"^[A-Za-z0-9@/_.\-\[\],=<>!~^*+: ]+$")
CARGO_CONFIG = """[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "/opt/greenloop/vendor"
"""


def check_packages(packages: list[str]) -> list[str]:
    """The package specs, stripped; SandboxError for anything that looks like an option or shell."""
    out = [p.strip() for p in packages if p.strip()]
    for p in out:
        if p.startswith("-") or not _SAFE.match(p):
            raise SandboxError(f"{p!r} is not a package spec (name, optionally with a version).")
    return sorted(set(out))


def check_pip_specs(packages: list[str]) -> list[str]:
    """`check_packages`, and each a requirement by name from the index: SandboxError for a URL or a local path."""
    out = check_packages(packages)
    for spec in out:
        if "/" in spec or "\\" in spec or spec.startswith("."):
            raise SandboxError(f"{spec!r} is a URL or a local path: greenloop installs packages by name from the "
                               "package index only (declare the package by name, or install it in project.setup).")
        try:
            Requirement(spec)
        except InvalidRequirement as exc:
            raise SandboxError(f"{spec!r} is not a package spec (name, optionally with a version): {exc}") from None
    return out


def package_name(spec: str) -> str:
    """The name in a package spec, compared the way package indexes compare names:
    `Requests>=2`, `pkg[extra]`, `lodash@4`, `@scope/pkg@1`, `Word-Count` -> `requests`, `pkg`, ..., `word_count`."""
    name = re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0]
    if "@" in name[1:]:
        name = name[: name.index("@", 1)]
    return normal_name(name)


def normal_name(name: str) -> str:
    """A name as package indexes compare them (`Word-Count` = `word_count`)."""
    return re.sub(r"[-_.\s]+", "_", name.strip().lower())


def without(packages: list[str], names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the specs to install, the specs dropped): a spec whose name is one of `names` is no package to
    install (the toolchain, a built-in module, the project's own code)."""
    skip = {normal_name(n) for n in names}
    keep = [p for p in packages if package_name(p) not in skip]
    return keep, [p for p in packages if package_name(p) in skip]


async def run_host(argv: list[str], cwd: Path, limit: int = 200_000, timeout: float = 600) -> ExecResult:  # noqa: ASYNC109 (the Sandbox API takes per-call timeouts)
    """Run a resolver command on the host (it needs the host network); never raises for its failure."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL)
    except FileNotFoundError:
        return ExecResult(127, "", f"{argv[0]}: not found on the host; install it to resolve packages.", 0.0)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return ExecResult(124, "", f"{argv[0]} timed out after {timeout}s", loop.time() - start, timed_out=True)
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        raise
    stdout, cut1 = cap_text(out.decode(errors="replace"), limit)
    stderr, cut2 = cap_text(err.decode(errors="replace"), limit)
    return ExecResult(proc.returncode or 0, stdout, stderr, loop.time() - start, truncated=cut1 or cut2)


def resolve_argv(manager: str, packages: list[str], dest: Path) -> list[list[str]]:
    """Host commands that fetch npm or cargo `packages` into `dest` for an offline install (pip: pip_resolve.py)."""
    if manager == "npm":
        return [["npm", "install", "--prefix", str(dest), "--no-audit", "--no-fund", "--ignore-scripts",
                 "--no-package-lock", "--loglevel=error", *packages]]
    if manager == "cargo":
        _write_cargo_manifest(dest, packages)
        return [["cargo", "vendor", "--manifest-path", str(dest / "Cargo.toml"), "--versioned-dirs",
                 str(dest / "vendor")]]
    raise SandboxError(f"Unknown package manager {manager!r} in the template.")


def _write_cargo_manifest(dest: Path, packages: list[str]) -> None:
    deps = []
    for spec in packages:
        m = re.match(r"^([A-Za-z0-9_\-]+)\s*(?:@|==|=)?\s*(.*)$", spec)
        if not m:
            raise SandboxError(f"{spec!r} is not a crate spec (name, name@version or name=version).")
        deps.append(f'{m[1]} = "{m[2].strip() or "*"}"')
    (dest / "src").mkdir(parents=True, exist_ok=True)
    (dest / "src" / "lib.rs").write_text("")
    (dest / "Cargo.toml").write_text(
        '[package]\nname = "greenloop-vendor"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n'
        + "\n".join(deps) + "\n")


def layer_dockerfile(parent: str, manager: str, packages: list[str]) -> tuple[str, str]:
    """(Dockerfile, context folder name) that install the resolved folder offline on `parent`."""
    quoted = " ".join(f"'{p}'" for p in packages)
    head = f"FROM {parent}\nUSER root\n"
    tail = "USER sandbox\n"
    if manager == "pip":
        return head + ("COPY wheels /opt/greenloop/wheels\n"
                       "RUN python3 -m pip install --no-index --only-binary=:all: --find-links /opt/greenloop/wheels "
                       f"--break-system-packages --disable-pip-version-check -q {quoted}\n") + tail, "wheels"
    if manager == "npm":
        return head + "COPY node_modules /node_modules/\n" + tail, "node_modules"
    if manager == "cargo":
        return head + ("COPY vendor /opt/greenloop/vendor/\n"
                       "RUN printf '%s' '" + CARGO_CONFIG.replace("\n", "\\n") + "' > /home/sandbox/.cargo/config.toml"
                       " && chown -R sandbox:sandbox /home/sandbox/.cargo\n") + tail, "vendor"
    raise SandboxError(f"Unknown package manager {manager!r} in the template.")


def local_install_argv(manager: str, packages: list[str], prefix: Path) -> list[str]:
    """The local backend's install: into the sandbox folder (site-packages / node_modules / cargo cache).

    pip takes wheels only (an sdist would be built, its setup.py run, on this machine) and writes what it
    installed to `pip-report.json`; npm runs no lifecycle scripts; `cargo fetch` runs no build scripts."""
    if manager == "pip":
        return [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--only-binary=:all:",
                "--report", str(prefix / "pip-report.json"), "--target", str(prefix / "site-packages"), *packages]
    if manager == "npm":
        return ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts",
                "--no-package-lock", "--loglevel=error", *packages]
    if manager == "cargo":
        _write_cargo_manifest(prefix / "cargo-fetch", packages)
        return ["cargo", "fetch", "--manifest-path", str(prefix / "cargo-fetch" / "Cargo.toml")]
    raise SandboxError(f"Unknown package manager {manager!r} in the template.")
