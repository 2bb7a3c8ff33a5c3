"""A warm pytest run: the child the worker (warm_worker.py) forks, from its session's start to its exit.

Loaded by the worker from its own folder (not imported by greenloop_sandbox, not put in `sys.modules`); the
standard library and pytest only. The child takes the client's stdio, cwd and environment and runs pytest
with the runner's plugins. It imports the project's modules from checked-hash bytecode in the worker's
folder, and pytest's rewritten test modules and conftest files from a cache there keyed by their source's
hash (`RewriteCache`). A first run notes what it imported (`Recorder`), for the worker to import after it.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import importlib.util
import json
import marshal
import os
import random
import signal
import sys
import warnings
from typing import Any

IGNORED_ENV = ("PYTEST_",)  # pytest's own variables (PYTEST_VERSION, PYTEST_CURRENT_TEST) are no change


def run_child(worker: Any, request: dict[str, Any], fds: list[int], learn: str | None) -> None:
    """The forked run: a new session, the client's stdio, cwd and environment, then pytest. Never returns."""
    code = 1
    try:
        os.setsid()
        with contextlib.suppress(Exception):  # die with the worker (a killed worker leaves no run behind)
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        for target, fd in zip((0, 1, 2), fds, strict=False):
            os.dup2(fd, target)
        for fd in fds:  # a cold run has stdin, stdout and stderr only
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for key, value in worker.env_delta.items():  # as if the libraries were imported in this environment
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        sys.argv = [worker.runner_path, *request["argv"]]
        sys.path.insert(0, os.getcwd())  # as run_pytest.main has it (the worker runs with -P: no folder of its own)
        importlib.invalidate_caches()
        random.seed()
        recorder = Recorder() if learn else None
        if recorder is not None:
            sys.meta_path.insert(0, recorder)
        sys.pycache_prefix = os.path.join(worker.private, "pyc")  # read there; written by _cache_bytecode only
        RewriteCache(os.path.join(worker.private, "rewritten")).install()
        _unwarned(worker.preloaded)
        argv = worker.runner.arguments(request["argv"])  # as run_pytest.main has them
        code = int(worker.runner.pytest.main(argv, plugins=worker.runner.plugins()))
        if recorder is not None and learn is not None:
            recorder.save(learn, os.getcwd())
        _cache_bytecode(os.getcwd())
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # print it as python would, then leave like the cold runner
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _unwarned(preloaded: frozenset[str]) -> None:
    """pytest marks each plugin's distribution for assertion rewriting and warns of a module of it already
    imported. A cold run imports a plugin's package (anyio, a pytest11 plugin) through pytest's rewrite;
    the worker may have imported it plainly, as a library another library imports (starlette imports anyio).
    That warning is the worker's doing and no cold run's (an error under `filterwarnings = error`, which ended
    every forked run of such a project), so it is not given for the modules the worker imported. What stays
    different: those modules' own asserts are not rewritten (a plugin's fixtures, in modules imported after
    the fork, are)."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:  # another pytest: warns as it does
        return
    hook = rewrite.AssertionRewritingHook
    original = getattr(hook, "_warn_already_imported", None)
    if original is None:
        return

    def warn_already_imported(self: Any, name: str) -> None:
        if name not in preloaded:
            original(self, name)

    hook._warn_already_imported = warn_already_imported  # type: ignore[method-assign]


class RewriteCache:
    """pytest's rewrite of a test module or conftest file (its asserts made to explain themselves), kept in
    `folder` by the hash of its source, path, pytest's and python's versions and the one setting the rewrite
    reads, so a run imports an unchanged test module without parsing and rewriting it again. pytest's own
    cache is off (`PYTHONDONTWRITEBYTECODE`) and checks the source's time and size only. A rewrite that
    warned (pytest's warning of an assert that is always true, python's of an escape sequence) is not
    kept: each run rewrites it and warns as a cold run does."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def install(self) -> None:
        try:
            import _pytest
            from _pytest.assertion import rewrite
        except ImportError:  # another pytest: rewrites as it does
            return
        original = rewrite._rewrite_test
        tag = f"{getattr(_pytest, '__version__', '?')}|{sys.version}|{sys.flags.optimize}|".encode()

        def rewrite_test(fn: Any, config: Any) -> tuple[os.stat_result, Any]:
            source = fn.read_bytes()
            tag_now = tag
            with contextlib.suppress(Exception):
                tag_now = tag + repr(config.getini("enable_assertion_pass_hook")).encode()
            key = hashlib.sha256(tag_now + b"|" + os.fsencode(str(fn)) + b"|" + source).hexdigest()
            path = os.path.join(self.folder, key)
            with contextlib.suppress(OSError, ValueError, EOFError, TypeError), open(path, "rb") as fh:
                return os.stat(fn), marshal.load(fh)
            warned = _Warned()
            with warned:
                stat, code = original(fn, config)
            if not warned.any and fn.read_bytes() == source and _compiles_quietly(source, str(fn)):
                self._keep(path, code)
            return stat, code

        rewrite._rewrite_test = rewrite_test

    def _keep(self, path: str, code: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                marshal.dump(code, fh)
            os.replace(tmp, path)


class _Warned:
    """Notes whether python code called `warnings.warn` or `warn_explicit` in its block; the calls go on as made."""

    def __init__(self) -> None:
        self.any = False

    def __enter__(self) -> None:
        self.saved = warnings.warn, warnings.warn_explicit

        def note(real: Any) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                self.any = True
                return real(*args, **kwargs)
            return call

        warnings.warn, warnings.warn_explicit = note(self.saved[0]), note(self.saved[1])

    def __exit__(self, *exc: object) -> None:
        warnings.warn, warnings.warn_explicit = self.saved


def _compiles_quietly(source: bytes, filename: str) -> bool:
    """Whether compiling `source` warns (python's own warnings come from C, past `_Warned`)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            compile(source, filename, "exec", dont_inherit=True)
        except Exception:
            return False
    return not seen


def _cache_bytecode(root: str) -> None:
    """Checked-hash bytecode (PEP 552: checked against the source's hash when imported, whatever its time
    or size) of the project's modules this run imported, in the worker's own folder (`sys.pycache_prefix`,
    never the workspace): the next run imports an unchanged module without compiling it, and compiles an
    edited one. Written once per module, as first seen: the module the candidates edit keeps the original's
    (its edits would each be compiled twice for nothing), which serves again when a run has it as it was.
    pytest's rewritten test modules and conftest files are not among them (another loader)."""
    import py_compile
    from importlib.machinery import SourceFileLoader

    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        if (not isinstance(getattr(spec, "loader", None), SourceFileLoader) or not isinstance(origin, str)
                or not origin.endswith(".py") or not inside(origin, root)):
            continue
        cached = importlib.util.cache_from_source(origin)
        if os.path.exists(cached):
            continue
        with contextlib.suppress(Exception):
            py_compile.compile(origin, cfile=cached, doraise=True, quiet=2,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


class Recorder:
    """A meta path finder that finds nothing: it notes each module imported, and whether the environment then
    differed from the start (a conftest or test set a variable a library may read when imported)."""

    def __init__(self) -> None:
        self.start = env_key(os.environ)
        self.order: list[str] = []
        self.changed: set[str] = set()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        self.order.append(name)
        if env_key(os.environ) != self.start:
            self.changed.add(name)

    def save(self, path: str, root: str) -> None:
        files = {name: where for name, module in list(sys.modules.items()) if (where := file_of(module))}
        chosen = []
        for name in dict.fromkeys(self.order):
            module = sys.modules.get(name)
            if module is None or name in self.changed or name == "__main__":
                continue
            where = file_of(module)
            if not where or inside(where, root) or any(inside(p, root) for p in getattr(module, "__path__", []) or []):
                continue
            if type(getattr(module, "__loader__", None)).__name__ == "AssertionRewritingHook":
                continue  # pytest rewrote it (a plugin): importing it first would only warn that it cannot
            chosen.append(name)
        import re

        patterns = [[key[1], key[2]] for key in list(getattr(re, "_cache", {})) if isinstance(key, tuple)
                    and len(key) == 3 and isinstance(key[1], str) and isinstance(key[2], int)]
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"import": chosen, "files": files, "root": root, "patterns": patterns}, fh)


def env_key(env: Any) -> frozenset[tuple[str, str]]:
    return frozenset((k, v) for k, v in env.items() if not k.startswith(IGNORED_ENV))


def file_of(module: Any) -> str:
    where = getattr(module, "__file__", None)
    return os.path.realpath(where) if isinstance(where, str) else ""


def inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real == base or real.startswith(base.rstrip("/") + "/")
