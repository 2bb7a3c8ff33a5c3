"""greenloop_sandbox: run a workspace's commands and tests in isolation.

A standalone library: it imports nothing from `greenloop`. Backends share one
async interface (`Sandbox`); templates describe a language's environment.
"""

from greenloop_sandbox.base import DEFAULT_LIMITS, ExecResult, Limits, Sandbox, SandboxError
from greenloop_sandbox.case_times import EarlyStop
from greenloop_sandbox.collect import CollectedTest, TestCollection, collect_tests
from greenloop_sandbox.docker_backend import DockerSandbox
from greenloop_sandbox.engine import docker_available
from greenloop_sandbox.local_backend import LocalSandbox
from greenloop_sandbox.project import ProjectEnv, read_dockerfile
from greenloop_sandbox.report import TestCase, TestFailure, TestReport
from greenloop_sandbox.spectrum import Spectrum, TestLines, run_spectrum
from greenloop_sandbox.templates import EnvTemplate, load_template, template_names
from greenloop_sandbox.tree import Snapshot, detect_template, read_tree

BACKENDS = ("auto", "docker", "local")


def open_sandbox(template: str, *, backend: str = "auto", limits: Limits = DEFAULT_LIMITS,
                 label: str | None = None, project: ProjectEnv | None = None, engine: str | None = None,
                 warm_runs: bool = False) -> Sandbox:
    """A sandbox for `template` (not started yet); 'auto' = Docker when an engine answers, else local.

    `project` overrides the template's test command and image (`project.py`); the language stays the template's.
    `engine` names a Docker engine by URL (the environment's when None); it implies the Docker backend.
    `warm_runs`: python test runs are forked from a worker that imported the session's libraries (warm.py).
    """
    env = load_template(template)
    if backend not in BACKENDS:
        raise SandboxError(f"Unknown sandbox backend {backend!r}; use one of: {', '.join(BACKENDS)}.")
    if backend == "auto":
        backend = "docker" if engine is not None or docker_available() else "local"
    if backend == "docker":
        return DockerSandbox(env, limits=limits, label=label, project=project, engine=engine, warm_runs=warm_runs)
    return LocalSandbox(env, limits=limits, label=label, project=project, warm_runs=warm_runs)


__all__ = [
    "CollectedTest", "DockerSandbox", "EarlyStop", "EnvTemplate", "ExecResult", "Limits", "LocalSandbox", "ProjectEnv",
    "Sandbox", "SandboxError", "Snapshot", "Spectrum", "TestCase", "TestCollection", "TestFailure", "TestLines",
    "TestReport", "collect_tests", "detect_template",
    "docker_available", "load_template", "open_sandbox", "read_dockerfile", "read_tree", "run_spectrum",
    "template_names",
]
