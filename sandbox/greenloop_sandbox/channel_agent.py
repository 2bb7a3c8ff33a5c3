"""The container end of a Docker sandbox's channel: runs commands and writes and reads files, on requests read from stdin.

A program run inside the sandbox (`python3 -S -P channel_agent.py`, one long-lived `docker exec` with its stdin
attached), never imported by greenloop_sandbox; the standard library only. docker_channel.py is the host end.
Each request is one JSON line; the answer is JSON lines on stdout: `{"out": b64}` and `{"err": b64}` chunks
of a command's output as they come, then one `{"done": ...}`. A command runs as `docker exec` would run it:
the agent's own environment (the container's, LC_CTYPE as before python's locale coercion) with the
request's on top, its cwd, stdin from /dev/null, its own session. Files are written as Docker's `put_archive` writes the tar the sandbox sends (mode
0755 or 0644, time 0, folders 0755 with time 0), so a run cannot tell which way its files came.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import subprocess
import sys
from typing import Any

CHUNK = 65536


def _send(message: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def run(request: dict[str, Any], base_env: dict[str, str]) -> dict[str, Any]:
    """Run `argv`, streaming its output; its exit code, and the text of the file `read` names after it."""
    proc = subprocess.Popen(request["argv"], cwd=request["cwd"], env={**base_env, **request["env"]},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        open_pipes = 2
        while open_pipes:
            for key, _ in sel.select():
                data = os.read(key.fd, CHUNK)
                if not data:
                    sel.unregister(key.fileobj)
                    open_pipes -= 1
                    continue
                _send({key.data: base64.b64encode(data).decode()})
    code = proc.wait()
    done: dict[str, Any] = {"code": code}
    if request.get("read"):
        done["read"] = read(request["read"])
    return done


def read(path: str) -> str | None:
    """A file's bytes (base64), or None when there is none."""
    try:
        with open(path, "rb") as fh:
            return base64.b64encode(fh.read()).decode()
    except OSError:
        return None


def write(root: str, files: list[list[Any]]) -> dict[str, Any]:
    """Write [relative path, base64 data, mode] rows under `root`, as put_archive writes a tar of them."""
    folders: set[str] = set()
    for rel, data, mode in files:
        path = os.path.join(root, rel)
        parent = os.path.dirname(path)
        while parent != root and parent.startswith(root + "/") and parent not in folders:
            folders.add(parent)
            parent = os.path.dirname(parent)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        tmp = os.path.join(os.path.dirname(path), f".greenloop-channel-{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(base64.b64decode(data))
        os.chmod(tmp, int(mode))
        os.utime(tmp, (0, 0))
        os.replace(tmp, path)
    for folder in sorted(folders, key=len, reverse=True):  # deepest first, so a parent's time is set last
        os.chmod(folder, 0o755)
        os.utime(folder, (0, 0))
    return {"written": len(files)}


def main() -> int:
    with contextlib.suppress(OSError):
        os.setsid()  # its own group: the cleanup after each command spares it (GREENLOOP_SPARE)
    base_env = dict(os.environ)
    was = base_env.pop("GREENLOOP_LC_CTYPE", None)  # LC_CTYPE before python's locale coercion (docker_channel.py)
    if was == "":
        base_env.pop("LC_CTYPE", None)
    elif was is not None:
        base_env["LC_CTYPE"] = was[1:]
    _send({"done": {"pgid": os.getpgid(0)}})
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "run":
                done = run(request, base_env)
            elif op == "write":
                done = write(request["root"], request["files"])
            else:
                done = {"error": f"unknown op {op!r}"}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            done = {"error": f"{type(exc).__name__}: {exc}"}
        _send({"done": done})
    return 0


if __name__ == "__main__":
    sys.exit(main())
