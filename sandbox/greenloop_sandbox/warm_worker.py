"""The warm pytest worker: a process that imported the test session's libraries forks one child per test run.

A program run inside the sandbox (`python3 -P warm_worker.py serve ...` once, `python3 -S -P warm_worker.py
run ...` per test run), never imported by greenloop_sandbox; the standard library and pytest only. Each run
is a child forked from the worker that runs the template's `run_pytest.py` plugins on the tree as it is
now, so the project's own modules, conftest files and tests are imported fresh in every child. The
worker learns what to import from its first run (a child of the bare worker: only pytest imported):
the modules that run imported which are not the project's, were not rewritten by pytest, and were not
imported while the environment differed from the start (a test that set a variable first). It imports
them after that run, and forks only while it has no thread besides its own. `run` hands the worker its
stdin, stdout and stderr (SCM_RIGHTS) and leaves with the child's exit status; it exits with UNAVAILABLE,
saying why on stderr, when the worker cannot take the run (the sandbox then runs it cold).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import time
import warnings
from typing import Any

UNAVAILABLE = 121  # `run`'s exit code when the worker cannot take the run; stderr starts with MARK
MARK = "greenloop-warm: unavailable:"
CONNECT_SECONDS = 2.0  # a worker that does not accept in this long is down
LEARN_TRIES = 3
IMPORT_SECONDS = 30  # importing the libraries may take this long; past it, runs are cold


# the client ------------------------------------------------------------------------------------
def run(sock_path: str, ack_seconds: float, argv: list[str]) -> int:
    """One test run in the worker, as this process: its stdio, cwd and environment; its exit status.

    A worker that has not forked the run `ack_seconds` after it was asked (it may be importing after its
    first run) is hung."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        try:
            conn.connect(sock_path)
            break
        except OSError as exc:
            if time.monotonic() > deadline:
                return _unavailable(f"the worker does not answer ({exc})")
            time.sleep(0.02)
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"
    try:
        conn.settimeout(ack_seconds)
        conn.sendall(request)
        reader = conn.makefile("rb")
        ready = json.loads(reader.readline() or b"{}")
        if "cold" in ready:
            return _unavailable(str(ready["cold"]))
        if not ready.get("ready"):
            return _unavailable("the worker ended before it took the run")
        # the stdio only now: sent to a worker that does not take them, they would hold this command's
        # output open (and the sandbox waiting) for as long as that worker lives
        socket.send_fds(conn, [b"F"], [0, 1, 2])
        forked = json.loads(reader.readline() or b"{}")
        if "pid" not in forked:
            return _unavailable("the worker ended before it forked the run")
        conn.settimeout(None)
        done = json.loads(reader.readline() or b"{}")
    except (OSError, ValueError) as exc:
        return _unavailable(f"the worker stopped answering ({exc})")
    if "status" not in done:
        return _unavailable("the worker ended during the run")
    status = int(done["status"])
    if os.WIFSIGNALED(status):  # die the way the run died, so the exit code is the one a cold run gives
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status)


def _unavailable(why: str) -> int:
    sys.stderr.write(f"{MARK} {why}\n")
    return UNAVAILABLE


# the worker ------------------------------------------------------------------------------------
class Worker:
    """Forks one child per run; imports the first run's libraries after it; refuses runs once unsafe."""

    def __init__(self, sock_path: str, support: str, state_path: str) -> None:
        self.sock_path, self.state_path = sock_path, state_path
        self.private = os.path.dirname(sock_path)
        self.runner_path = os.path.join(support, "run_pytest.py")
        self.runner = _load(self.runner_path, "run_pytest")  # imports pytest, as a cold run does first
        self.child = _load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_child.py"), "warm_child")
        self.env_delta: dict[str, str | None] = {}  # what the imports did to the environment, applied in children
        self.preloaded: frozenset[str] = frozenset()  # the modules the worker imported (a cold run had none)
        self.learnt = False
        self.tries = 0  # first runs that did not say what they imported (a test that ended its process)
        self.cold = ""  # why runs are refused (the sandbox runs them cold from then on)

    def serve(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.sock_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.sock_path)
        listener.listen(8)
        self._write_state()
        while True:
            conn, _ = listener.accept()
            try:
                learn = self._serve_one(listener, conn)
            except (OSError, ValueError):  # a client that went away, or sent what is not a request
                learn = None
            finally:
                conn.close()
            if learn is not None:
                self._learn(learn)

    def _serve_one(self, listener: socket.socket, conn: socket.socket) -> str | None:
        """One run: fork, hand the child the client's stdio, report its status. The learning file, if any."""
        conn.settimeout(CONNECT_SECONDS)  # a client that does not say what to run in this long is gone
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        request = json.loads(data)
        if self.cold:
            conn.sendall(json.dumps({"cold": self.cold}).encode() + b"\n")
            return None
        conn.sendall(b'{"ready": true}\n')
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        conn.settimeout(None)
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return None
        try:
            learn = None if self.learnt else os.path.join(self.private, "learnt.json")
            pid = os.fork()
            if pid == 0:  # the child never returns
                listener.close()
                conn.close()
                self.child.run_child(self, request, fds, learn)
        finally:
            for fd in fds:
                os.close(fd)
        with contextlib.suppress(OSError):  # a client gone by now is seen by _wait
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        status = _wait(pid, conn)
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"status": status}).encode() + b"\n")
        return learn

    def _learn(self, path: str) -> None:
        """Import what the first run imported (see the module docstring); refuse runs when that is unsafe."""
        try:
            with open(path, encoding="utf-8") as fh:
                seen = json.load(fh)
            os.unlink(path)
        except (OSError, ValueError):
            self.tries += 1
            if self.tries >= LEARN_TRIES:
                self.cold = f"{LEARN_TRIES} test runs in a row ended before they said what they imported"
                self._write_state()
            return  # the next run learns (until then, each run is a child of the bare worker)
        self.learnt = True
        before, modules = dict(os.environ), set(sys.modules)
        signal.signal(signal.SIGALRM, _too_long)
        signal.alarm(IMPORT_SECONDS)
        try:
            with warnings.catch_warnings(), _quiet():  # pytest resets the filters after collecting, as here
                for name in seen["import"]:
                    try:
                        importlib.import_module(name)
                    except _TooLong:
                        raise
                    except BaseException:  # a module that does not import here is imported by the child
                        sys.modules.pop(name, None)
            _warm_caches(seen.get("patterns", []))
        except _TooLong:
            self.cold = f"importing the test session's libraries took longer than {IMPORT_SECONDS}s"
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
        self.env_delta = {k: os.environ.get(k) for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}
        self.preloaded = frozenset(sys.modules) - modules
        self.cold = self.cold or _unsafe(seen, self.child)
        self._write_state(imported=len(seen["import"]))

    def _write_state(self, **extra: Any) -> None:
        data = {"pid": os.getpid(), "pgid": os.getpgid(0), "learnt": self.learnt, "cold": self.cold, **extra}
        tmp = self.state_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, self.state_path)


def _load(path: str, name: str) -> Any:
    """The module at `path`, run once and kept out of `sys.modules` (a project's module may have its name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no {name} at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _warm_caches(patterns: list[list[Any]]) -> None:
    """Caches that only save time: the regular expressions the first run compiled (`re`'s cache, keyed by
    pattern and flags), and the installed distributions' listing (importlib.metadata's, keyed by the
    folders' mtimes) that pytest reads for its plugins' entry points."""
    import importlib.metadata
    import re

    for pattern, flags in patterns:
        with contextlib.suppress(Exception):
            re.compile(pattern, flags)
    with contextlib.suppress(Exception):
        importlib.metadata.entry_points(group="pytest11")


class _TooLong(Exception):
    pass


def _too_long(signum: int, frame: Any) -> None:
    raise _TooLong


def _unsafe(seen: dict[str, Any], child: Any) -> str:
    """Why forking this worker would not give a cold run's result, or ""."""
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:
        return f"a library started {threads - 1} thread(s) when imported, and a forked run would lack them"
    files: dict[str, str] = seen["files"]
    for name, module in list(sys.modules.items()):
        where = child.file_of(module)
        if name in files and where and files[name] != where:
            return f"the module {name} is the project's own in a test run ({files[name]}) but not in the worker ({where})"
        if where and child.inside(where, seen["root"]):
            return f"importing the test session's libraries imported the project's own {name}"
    return ""


def _wait(pid: int, conn: socket.socket) -> int:
    """The child's wait status; a client that goes away (its run timed out) takes the child with it."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([pidfd, conn.fileno()], [], [])
            if pidfd in ready:
                break
            try:
                gone = not conn.recv(1, socket.MSG_PEEK)
            except OSError:
                gone = True
            if gone:  # the client is gone: its run timed out or was cancelled
                _kill_group(pid)
                break
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    _kill_group(pid)  # what the run left in its session's group
    if os.getpid() == 1:  # the init of a PID namespace of its own (the local sandbox's `unshare -p`): as the
        with contextlib.suppress(OSError):  # end of a cold run's namespace would, end all the run left there
            os.kill(-1, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # and reap them (orphans in that namespace are its children)
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    return status


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def _quiet() -> Any:
    """Output of imports goes nowhere (the worker's own output is its log)."""
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def main(argv: list[str]) -> int:
    if len(argv) >= 4 and argv[0] == "run" and argv[3] == "--":  # run SOCKET ACK-SECONDS -- PYTEST-ARGS
        return run(argv[1], float(argv[2]), argv[4:])
    if len(argv) == 4 and argv[0] == "serve":  # serve SOCKET SUPPORT STATE
        with contextlib.suppress(OSError):
            os.setsid()  # its own session and group: the sandbox's cleanup after each command spares that group
        os.makedirs(os.path.dirname(argv[1]), mode=0o700, exist_ok=True)
        Worker(argv[1], argv[2], argv[3]).serve()
        return 0
    sys.stderr.write("usage: warm_worker.py serve SOCKET SUPPORT STATE | run SOCKET ACK-SECONDS -- PYTEST-ARGS\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
