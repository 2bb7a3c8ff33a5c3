"""Sandbox images moved between Docker engines (`docker save | docker load`), for engines without a registry.

Images are tagged by the hash of their recipe (`images.py`), so an engine that already holds a tag holds
the same image: a copy happens once per engine and tag, never per sandbox.
"""

from __future__ import annotations

import logging
import tempfile
import time
from typing import Any

from greenloop_sandbox import images
from greenloop_sandbox.templates import EnvTemplate
from greenloop_sandbox.values import SandboxError

log = logging.getLogger(__name__)

CHUNK = 1 << 20


def copy_image(source: Any, target: Any, tag: str) -> float:
    """Copy `tag` from the `source` engine to `target` (save -> temp file -> load); seconds it took."""
    start = time.monotonic()
    with tempfile.TemporaryFile(prefix="greenloop-image-") as tar:
        try:
            for chunk in source.api.get_image(tag, chunk_size=CHUNK):
                tar.write(chunk)
        except Exception as exc:
            raise SandboxError(f"Saving the image {tag} from its engine failed: {exc}") from exc
        tar.seek(0)
        try:
            for line in target.api.load_image(tar, quiet=True):
                if isinstance(line, dict) and line.get("error"):
                    raise SandboxError(f"Loading the image {tag} failed: {line['error']}")
        except SandboxError:
            raise
        except Exception as exc:
            raise SandboxError(f"Loading the image {tag} into the engine failed: {exc}") from exc
    seconds = time.monotonic() - start
    log.info("copied %s to another engine in %.1fs", tag, seconds)
    return seconds


def template_image_on(target: Any, template: EnvTemplate, source: Any | None) -> str:
    """The template's image on `target`: there already, else copied from `source` when it has it, else built."""
    tag = images.template_tag(template)
    if images.image_exists(target, tag):
        return tag
    if source is not None and images.image_exists(source, tag):
        with images.build_lock():
            if not images.image_exists(target, tag):
                copy_image(source, target, tag)
        return tag
    return images.build_template_image(target, template)
