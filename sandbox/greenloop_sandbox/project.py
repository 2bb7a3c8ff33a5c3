"""A project's own test command and environment, laid over its template (which keeps the language facts).

The template still says what the language is (grammars, test files, packages: its `[language]` record)
and is the environment by default. A project may say instead how its tests run (`test_command`, any shell
command, and `test_report`, a report file it writes) and where its environment comes from: an existing
local `image`, or a Dockerfile of its own (built and cached by hash), with `setup` commands baked on top.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.tree import check_relpath
from greenloop_sandbox.values import SandboxError

DOCKERFILE = ".greenloop/Dockerfile"  # a project's own image recipe; its folder is the build context
_NOT_CONTEXT = ("runs.sqlite3", "prompts/", "plan.md")  # greenloop's own files there, not the image's


@dataclass(frozen=True)
class ProjectEnv:
    """What a project overrides; empty fields keep the template's."""

    test_command: str = ""  # the whole command, run from the workspace root; it cannot select tests
    test_report: str = ""  # workspace-relative report the command writes (JUnit XML or TAP); "": none
    setup: tuple[str, ...] = ()  # commands baked into the image (as root, before the workspace is there)
    image: str = ""  # an image on the engine to start from (never pulled)
    dockerfile: str = ""  # the project's Dockerfile text ("": none)
    dockerfile_name: str = DOCKERFILE  # where it came from, for messages
    context: tuple[tuple[str, bytes, int], ...] = ()  # the other files of its folder: (path, content, mode)

    @property
    def builds_image(self) -> bool:
        """Whether the environment is not the template's image as it is."""
        return bool(self.image or self.dockerfile or self.setup)

    def apply(self, template: EnvTemplate) -> EnvTemplate:
        """`template` running this project's test command (when it has one); its language record is kept."""
        if not self.test_command.strip():
            return template
        report = check_relpath(self.test_report) if self.test_report else ""
        return replace(
            template, test_command=self.test_command.replace("{", "{{").replace("}", "}}"), parser="auto",
            report="", workspace_report=report, selects_tests=False, case_timeout="", case_limits=False, case_timeout_probe="",
            own_command=self.test_command.strip(),
            spectrum_command="",  # the coverage runner is pytest's; a project's own command may not be
            collect_command="",  # so is the collector: a project's own command's tests are found by running it
        )


def read_dockerfile(workspace: Path, name: str = DOCKERFILE) -> tuple[str, tuple[tuple[str, bytes, int], ...]]:
    """The Dockerfile at `workspace/name` and the other files of its folder (with their permission bits,
    so a tool it copies stays executable); ("", ()) when there is none."""
    path = workspace / check_relpath(name)
    if not path.is_file():
        return "", ()
    try:
        text = path.read_text(encoding="utf-8")
        context = []
        for file in sorted(path.parent.rglob("*")):
            rel = file.relative_to(path.parent).as_posix()
            if file.is_file() and not file.is_symlink() and file != path and not rel.startswith(_NOT_CONTEXT):
                context.append((rel, file.read_bytes(), file.stat().st_mode & 0o777))
    except (OSError, UnicodeDecodeError) as exc:
        raise SandboxError(f"{name}: unreadable ({exc}); fix it or remove it.") from exc
    return text, tuple(context)


__all__ = ["DOCKERFILE", "ProjectEnv", "read_dockerfile"]
