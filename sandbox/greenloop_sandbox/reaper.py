"""Leftovers of crashed sessions: labels that tie a container to its owner process, and the reaper."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LABEL = "greenloop.sandbox"
HOST = socket.gethostname()


def process_start(pid: int) -> str:
    """The kernel's start time of `pid` ('' when gone): pid + start time names a process uniquely."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def owner_labels(session_id: str, label: str | None) -> dict[str, str]:
    pid = os.getpid()
    labels = {LABEL: "1", "greenloop.session": session_id, "greenloop.owner_pid": str(pid),
              "greenloop.owner_start": process_start(pid), "greenloop.host": HOST}
    if label:
        labels["greenloop.label"] = label
    return labels


def owner_alive(labels: dict[str, str]) -> bool:
    """True unless the owner is provably gone (same host, and its pid is dead or reused)."""
    if labels.get("greenloop.host") != HOST:
        return True
    try:
        pid = int(labels.get("greenloop.owner_pid", ""))
    except ValueError:
        return False
    start = process_start(pid)
    return bool(start) and start == labels.get("greenloop.owner_start", start)


def reap_containers(client: Any, *, everything: bool = False) -> list[str]:
    """Remove greenloop containers whose owner is gone (all of them with `everything`); their names."""
    removed = []
    for c in list_containers(client):
        if everything or not owner_alive(c.labels):
            try:
                c.remove(force=True)
                removed.append(c.name)
            except Exception as exc:  # already gone, or being removed by its owner
                log.debug("reaper: %s: %s", c.name, exc)
    return removed


def list_containers(client: Any) -> list[Any]:
    """greenloop's containers, running or not; one that its owner removes while they are read is left out.

    docker's list is the ids, then one request per id: a sandbox that another run closes in between
    would otherwise raise NotFound here, and so fail the start of an unrelated sandbox (a CI run,
    2026-11-27: a Ray worker's first start reaped while another cell closed its container).
    """
    return list(client.containers.list(all=True, filters={"label": f"{LABEL}=1"}, ignore_removed=True))
