"""What a local sandbox's commands get: a filtered host env, rlimits, and the network-isolation probe."""

from __future__ import annotations

import contextlib
import ctypes
import re
import resource
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from greenloop_sandbox.values import Limits

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_DROP_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AWS_", "AZURE_", "GOOGLE_", "GCP_", "GH_", "GITHUB_", "HF_",
                  "HUGGING", "DOCKER_", "SSH_", "GPG_", "GREENLOOP_", "NPM_CONFIG_", "PIP_INDEX", "VSCODE_")


def filtered_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The host environment minus anything that looks like a credential or a host-control variable."""
    return {k: v for k, v in environ.items() if not _SECRET.search(k) and not k.upper().startswith(_DROP_PREFIXES)}


def parse_memory(text: str) -> int:
    """'2g' / '512m' / '1024k' / bytes -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", text.lower())
    if not m:
        raise ValueError(f"bad memory size {text!r}")
    return int(float(m[1]) * 1024 ** " kmgt".index(m[2] or " "))


def limits_preexec(limits: Limits) -> Callable[[], None]:
    """Runs in the child before exec: rlimits, and die with the parent (PR_SET_PDEATHSIG)."""
    memory = parse_memory(limits.memory)

    def apply() -> None:
        for res, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_NPROC, limits.pids),
                           (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_CORE, 0)):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(res, (value, value))
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return apply


@dataclass(frozen=True)
class Isolation:
    """How local commands are wrapped, and what that means."""

    prefix: tuple[str, ...]
    network: bool   # True: commands have no network
    pid_ns: bool    # True: leftovers die with the command (its own PID namespace)
    note: str


_probe: Isolation | None = None


def probe_isolation() -> Isolation:
    """Probe once whether `unshare` may create user/net/pid namespaces here."""
    global _probe
    if _probe is not None:
        return _probe
    full = ("unshare", "-r", "-n", "-p", "-f", "--kill-child", "--")
    net = ("unshare", "-r", "-n", "--")
    if _works(full):
        _probe = Isolation(full, True, True, "local sandbox: no network, own PID namespace (weaker than Docker)")
    elif _works(net):
        _probe = Isolation(net, True, False, "local sandbox: no network; no PID namespace, so a child that "
                           "leaves its process group can outlive a command (weaker than Docker)")
    else:
        _probe = Isolation((), False, False, "local sandbox: the kernel does not allow `unshare -rn` here, so "
                           "commands HAVE network access and only process-group cleanup; use Docker for isolation")
    return _probe


def _works(prefix: tuple[str, ...]) -> bool:
    try:
        return subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
