"""`greenloop sandbox build-images | run | reap`: the sandbox's images, a test run, and leftovers."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.step import EnvironmentStep
from greenloop.agent.events import EnvironmentIssue
from greenloop.agent.ports import choose_template, open_sandbox_for, read_workspace, sandbox_errors
from greenloop.cli.common import settings_from_args
from greenloop.cli.exit_codes import ENVIRONMENT, GREEN, NOT_GREEN
from greenloop.errors import GreenloopError
from greenloop.settings import Settings
from greenloop_sandbox import TestReport
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.images import build_base, build_template_image, image_size
from greenloop_sandbox.local_backend import reap_local_dirs
from greenloop_sandbox.parsers.common import NO_RUN
from greenloop_sandbox.reaper import reap_containers
from greenloop_sandbox.templates import load_template, template_names


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sandbox", parents=[common], help="sandbox images, test runs, leftovers",
                       description=__doc__)
    actions = p.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    build = actions.add_parser("build-images", help="build the base and template images (cached by tag; "
                               "works air-gapped with a local Debian mirror: GREENLOOP_DEBIAN_MIRROR)")
    build.add_argument("--template", choices=template_names(), help="only this template (default: all)")
    build.add_argument("--force", action="store_true", help="rebuild even when the tag exists")
    run_p = actions.add_parser("run", parents=[common], help="run a workspace's tests in the sandbox")
    run_p.add_argument("workspace", nargs="?", type=Path, default=Path("."), help="project folder (default: .)")
    run_p.add_argument("--template", help="python | node | rust (default: detected)")
    run_p.add_argument("--json", action="store_true", help="print the TestReport as JSON")
    reap = actions.add_parser("reap", help="remove sandbox containers and temp folders of crashed sessions")
    reap.add_argument("--all", action="store_true", help="remove every greenloop sandbox container")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.sandbox_command == "build-images":
        with sandbox_errors():
            return _build_images(args.template, args.force)
    if args.sandbox_command == "reap":
        return _reap(args.all)
    return _run_tests(args)


def _build_images(template: str | None, force: bool) -> int:
    client = docker_client()
    say = lambda text: print(f"[sandbox] {text}", file=sys.stderr, flush=True)  # noqa: E731
    start = time.monotonic()
    tag = build_base(client, force=force, progress=say)
    print(f"base      {tag}  {(image_size(client, tag) or 0) / 1e6:.0f} MB")
    for name in [template] if template else template_names():
        tag = build_template_image(client, load_template(name), force=force, progress=say)
        print(f"{name:<9} {tag}  {(image_size(client, tag) or 0) / 1e6:.0f} MB")
    say(f"done in {time.monotonic() - start:.1f}s")
    return 0


def _reap(everything: bool) -> int:
    removed = [str(p) for p in reap_local_dirs()]
    try:
        with sandbox_errors():
            removed += reap_containers(docker_client(), everything=everything)
    except GreenloopError as exc:
        print(f"[sandbox] containers not checked: {exc}", file=sys.stderr)
    for name in removed:
        print(f"removed {name}")
    print(f"{len(removed)} leftover(s) removed")
    return 0


def _run_tests(args: argparse.Namespace) -> int:
    workspace = args.workspace.expanduser().resolve()
    if not workspace.is_dir():
        raise GreenloopError(f"{workspace}: not a folder; pass the project to test.")
    settings = settings_from_args(args, workspace)
    files = read_workspace(workspace)
    template = choose_template(settings, files, args.template)
    for note in files.skipped:
        print(f"[sandbox] skipped {note}", file=sys.stderr)
    report, backend, issue = asyncio.run(_run_once(settings, template, files, workspace))
    if args.json:
        print(json.dumps({"backend": backend, "template": template, **report.model_dump(),
                          "environment_problem": issue.model_dump() if issue else None}, indent=2))
    else:
        print_report(report, backend, template)
        if issue is not None:
            where = f"{issue.file}:{issue.line}" if issue.file and issue.line else (issue.file or "the test run")
            print(f"\nThe tests cannot run in the sandbox: {issue.problem.replace('_', ' ')} at {where}: "
                  f"{issue.message}\n{issue.fix}")
    if issue is not None:
        return ENVIRONMENT
    if report.total == 0 and not report.failures:
        return ENVIRONMENT  # no tests found
    return GREEN if report.green else NOT_GREEN


async def _run_once(settings: Settings, template: str, files: dict[str, bytes],
                    workspace: Path) -> tuple[TestReport, str, EnvironmentIssue | None]:
    """The tests in the environment a fix run would have (its environment step, said on stderr)."""
    async with open_sandbox_for(settings, template, label="cli", workspace=workspace) as sb:
        if sb.note:
            print(f"[sandbox] {sb.note}", file=sys.stderr)
        step = EnvironmentStep(sb, WorkingCopy.from_workspace(workspace))
        await step.prepare()
        await sb.sync(files)
        report, issue = await step.settle(await sb.run_tests(), None, settings.sandbox.test_timeout)
        event = step.event(issue)
        print(f"[sandbox] {event.summary}", file=sys.stderr)
        for line in event.lines:
            print(f"[sandbox]   {line}", file=sys.stderr)
        return report, sb.backend, issue


def print_report(report: TestReport, backend: str, template: str) -> None:
    verdict = "GREEN" if report.green else "RED"
    print(f"{verdict}  {report.summary()}  ({template} on {backend}, {report.duration:.2f}s"
          f"{', timed out' if report.timed_out else ''})")
    for f in report.failures:
        where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "?")
        print(f"\n{f.kind.upper()} {f.test_id}  [{where}]\n  {f.message.strip().splitlines()[0] if f.message else ''}")
        if f.test_id == NO_RUN and f.traceback.strip():  # no report: the runner's own words are all there is
            print("\nThe test command's output ended with:\n" + f.traceback.rstrip())
