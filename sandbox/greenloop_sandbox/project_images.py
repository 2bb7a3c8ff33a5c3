"""A project's own image: its `image` or Dockerfile (built once, tagged by hash), made fit to be a sandbox,
with its `setup` commands baked on top as a layer cached by their text.

Nothing is pulled: an `image` must be on the engine, and a Dockerfile's FROM too (or `ARG BASE` /
`FROM ${BASE}`, which is given the template's image). A build that fails is a SandboxError carrying the
end of its build log.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from pathlib import Path
from typing import Any

from greenloop_sandbox.images import (
    IMAGE_LABEL,
    Progress,
    build_image,
    build_lock,
    build_template_image,
    image_exists,
    layer_tag,
)
from greenloop_sandbox.project import ProjectEnv
from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.values import SandboxError

log = logging.getLogger(__name__)

LOG_TAIL = 3000  # characters of a failed build's log shown in its error
# Any image becomes a sandbox: uid 1000 with a home, /workspace, no entrypoint in front of `sleep infinity`.
_FIT = """\
FROM {parent}
USER root
RUN (id -u 1000 >/dev/null 2>&1 || echo 'sandbox:x:1000:1000::/home/sandbox:/bin/sh' >> /etc/passwd) \\
 && mkdir -p /workspace /home/sandbox && chown 1000:1000 /workspace /home/sandbox
ENTRYPOINT []
USER 1000:1000
WORKDIR /workspace
"""


def build_project_image(client: Any, template: EnvTemplate, project: ProjectEnv, *,
                        progress: Progress = log.info) -> str:
    """The tag of the project's sandbox image (built only when missing)."""
    if project.image:
        tag = _fitted(client, project.image, _image_id(client, project.image, "project.image"))
    elif project.dockerfile:
        tag = _fitted(client, _dockerfile_image(client, template, project, progress), None)
    else:
        tag = build_template_image(client, template, progress=progress)
    if project.setup:
        tag = _with_setup(client, tag, project.setup, progress)
    return tag


def _image_id(client: Any, name: str, where: str) -> str:
    import docker.errors

    try:
        return str(client.images.get(name).id)
    except docker.errors.ImageNotFound:
        raise SandboxError(f"{where}: image {name!r} is not on this Docker engine, and greenloop never pulls; "
                           f"build or pull it first (docker images lists what is there).") from None


def _dockerfile_image(client: Any, template: EnvTemplate, project: ProjectEnv, progress: Progress) -> str:
    """The tag of the project's Dockerfile's image, built with the host network when its hash is new."""
    args = {"BASE": build_template_image(client, template, progress=progress)} if "BASE" in project.dockerfile else {}
    digest = hashlib.sha256(project.dockerfile.encode() + repr(sorted(args.items())).encode())
    for name, data, mode in project.context:
        digest.update(f"{name}\0{mode:o}\0".encode() + data)
    tag = f"greenloop/project:{digest.hexdigest()[:16]}"
    with build_lock():
        if not image_exists(client, tag):
            progress(f"building {project.dockerfile_name} as {tag} ...")
            with tempfile.TemporaryDirectory(prefix="greenloop-context-") as tmp:
                ok, text = build_image(client, tag, project.dockerfile, _context_files(Path(tmp), project),
                                       network="host", buildargs=args, labels={IMAGE_LABEL: "project"})
            if not ok:
                raise SandboxError(f"Building {project.dockerfile_name} failed; fix it (or remove it to use the "
                                   f"{template.name} template's image). The end of its build log:\n{_tail(text)}")
    return tag


def _context_files(folder: Path, project: ProjectEnv) -> dict[str, bytes | Path]:
    """The build context's files written under `folder` with their modes (a tar of them keeps the modes)."""
    files: dict[str, bytes | Path] = {}
    for name, data, mode in project.context:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
        files[name] = path
    return files


def _fitted(client: Any, name: str, image_id: str | None) -> str:
    """Image `name` with a sandbox user and /workspace: a layer cached by the image's id, built offline."""
    tag = layer_tag(image_id or _image_id(client, name, "the project's image"), "fit:1")
    with build_lock():
        if not image_exists(client, tag):
            ok, text = build_image(client, tag, _FIT.format(parent=name), {})
            if not ok:
                raise SandboxError(f"Image {name!r} cannot be a sandbox (greenloop adds a user and /workspace "
                                   f"with `sh`, `id`, `mkdir` and `chown`); its build log:\n{_tail(text)}")
    return tag


def _with_setup(client: Any, parent: str, setup: tuple[str, ...], progress: Progress) -> str:
    """`parent` with the setup commands run as root (host network, like a template's own), by their text."""
    parent_id = _image_id(client, parent, "the sandbox image")
    tag = layer_tag(parent_id, "setup:" + "\n".join(setup))
    runs = "".join(f"RUN {json.dumps(['sh', '-c', command])}\n" for command in setup)
    dockerfile = (f"FROM {parent}\nUSER root\nWORKDIR /workspace\n{runs}"
                  "RUN chown -R 1000:1000 /workspace /home/sandbox\nUSER 1000:1000\n")
    with build_lock():
        if not image_exists(client, tag):
            progress(f"running project.setup ({len(setup)} command(s)) into {tag} ...")
            ok, text = build_image(client, tag, dockerfile, {}, network="host")
            if not ok:
                raise SandboxError(f"project.setup failed; fix the command (it runs as root, before the "
                                   f"project's files are there). The end of its build log:\n{_tail(text)}")
    return tag


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= LOG_TAIL else "[... the build log's start cut ...]\n" + text[-LOG_TAIL:]


__all__ = ["LOG_TAIL", "build_project_image"]
