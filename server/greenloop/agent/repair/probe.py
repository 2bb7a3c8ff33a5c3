"""Captures and replays calls of named functions; runs inside the sandbox only (stdlib, no greenloop imports).

Capture is a pytest plugin (`-p probe`, settings in the GREENLOOP_PROBE variable as JSON: `targets`, a
list of [path, qualified name]; `out`, the calls file; `variants` and `seed`, how many type-preserving
variants of the captured arguments to add). A profile hook sees each call of a target (the code object's
file and qualified name), pickles its arguments as they were on entry, and changes nothing the tests see.
Generators and coroutines are not captured (a call returns an object, not a result).

Replay (`python3 probe.py replay CALLS [SECONDS] [BUDGET]`) calls each captured call again on the tree in
the current folder, each with a timer, and prints one JSON line per call: the digest of what it returned
(or the exception type it raised) and of its arguments afterwards, a short preview, its seconds, and
whether it is a generated variant (`v`) rather than a captured call.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
import json
import math
import os
import pickle
import random
import re
import signal
import sys
import threading
import time
from typing import Any

CO_GENERATORS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
PER_TARGET = 300  # captured calls kept per target at most (distinct arguments)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class _Timeout(BaseException):
    """Raised by the timer inside a replayed call (a BaseException: `except Exception` does not swallow it)."""


# -- capture (a pytest plugin) ---------------------------------------------------------------------------

_state: dict[str, Any] = {}


def pytest_configure(config: Any) -> None:
    settings = json.loads(os.environ.get("GREENLOOP_PROBE", "{}") or "{}")
    targets = [(os.sep + str(path).lstrip("/"), str(name)) for path, name in settings.get("targets", [])]
    if not targets or not settings.get("out"):
        return
    _state.update(settings=settings, targets=targets, calls=[], seen=set(), counts={}, skipped=0)

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        for index, (path, name) in enumerate(targets):
            if code.co_qualname == name and code.co_filename.endswith(path):
                _record(index, frame)
                return

    _state["hook"] = hook
    sys.setprofile(hook)
    threading.setprofile(hook)


def pytest_unconfigure(config: Any) -> None:
    if "hook" not in _state:
        return
    sys.setprofile(None)
    threading.setprofile(None)
    settings = _state["settings"]
    calls = list(_state["calls"])
    variants = _variants(calls, int(settings.get("variants", 0)), int(settings.get("seed", 0)))
    with open(settings["out"], "wb") as out:
        pickle.dump({"targets": _state["targets"], "calls": calls + variants, "captured": len(calls),
                     "skipped": _state["skipped"]}, out)


def _record(index: int, frame: Any) -> None:
    code = frame.f_code
    counts = _state["counts"]
    if code.co_flags & CO_GENERATORS or counts.get(index, 0) >= PER_TARGET:
        return
    positional, keywords = arguments(code, frame.f_locals)
    try:
        data = pickle.dumps((index, positional, keywords))
    except Exception:  # an argument that cannot be pickled (a socket, a lambda): not replayable
        _state["skipped"] += 1
        return
    if data in _state["seen"]:
        return
    _state["seen"].add(data)
    counts[index] = counts.get(index, 0) + 1
    _state["calls"].append(data)


def arguments(code: Any, values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The call's arguments from a frame's locals at entry: (positional, keyword-only and **kwargs)."""
    names = code.co_varnames
    count = code.co_argcount
    positional = [values[n] for n in names[:count] if n in values]
    keywords = {n: values[n] for n in names[count : count + code.co_kwonlyargcount] if n in values}
    rest = count + code.co_kwonlyargcount
    if code.co_flags & 0x04:  # *args
        positional.extend(values.get(names[rest], ()))
        rest += 1
    if code.co_flags & 0x08:  # **kwargs
        keywords.update(values.get(names[rest], {}))
    return positional, keywords


def _variants(calls: list[bytes], count: int, seed: int) -> list[bytes]:
    """`count` calls more, each a captured call with its arguments changed but their types kept."""
    if count <= 0 or not calls:
        return []
    rng = random.Random(seed)
    seen, out = set(calls), list[bytes]()
    for _ in range(count * 5):
        if len(out) >= count:
            break
        index, positional, keywords = pickle.loads(rng.choice(calls))
        changed = (index, [mutate(v, rng) for v in positional], {k: mutate(v, rng) for k, v in keywords.items()})
        try:
            data = pickle.dumps(changed)
        except Exception:
            continue
        if data not in seen:
            seen.add(data)
            out.append(data)
    return out


def mutate(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value of the same type, near the given one or far from it (larger numbers find slower code)."""
    if isinstance(value, bool):
        return rng.choice((True, False))
    if isinstance(value, int):
        return rng.choice((value + 1, value - 1, value * 2, value * 10 + 7, value * 1000 + 3, -value,
                           rng.randint(-abs(value) - 10, abs(value) + 10), rng.randint(0, 100)))
    if isinstance(value, float):
        return rng.choice((value * rng.uniform(0.5, 2.0), -value, value + rng.uniform(-10, 10), round(value)
                           + 0.5, value * 1000))
    if isinstance(value, str):
        letters = value or "abc xyz"
        size = max(0, len(value) + rng.choice((-1, 0, 1, 3, len(value))))
        return rng.choice(("".join(rng.choice(letters) for _ in range(size)),
                           "".join(rng.sample(value, len(value))), value[::-1], value + value[:2], value[1:]))
    if isinstance(value, (list, tuple)) and depth < 4:
        items = [mutate(v, rng, depth + 1) for v in value]
        if items and rng.random() < 0.3:
            items.pop(rng.randrange(len(items)))
        if value and rng.random() < 0.3:
            items.append(mutate(rng.choice(list(value)), rng, depth + 1))
        if rng.random() < 0.2:
            rng.shuffle(items)
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict) and depth < 4:
        return {k: mutate(v, rng, depth + 1) for k, v in value.items()}
    return copy.deepcopy(value)


# -- replay ------------------------------------------------------------------------------------------------


def describe(value: Any, depth: int = 0, seen: frozenset[int] = frozenset()) -> Any:
    """A JSON-able picture of a value that two processes can compare (no addresses; floats to 9 digits)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value) if math.isnan(value) or math.isinf(value) else float(f"{value:.9g}")
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if depth > 6 or id(value) in seen:
        return _ADDRESS.sub("", repr(value))[:500]
    inner = seen | {id(value)}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [describe(v, depth + 1, inner) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted((describe(v, depth + 1, inner) for v in value), key=_key)]
    if isinstance(value, dict):
        pairs = [[describe(k, depth + 1, inner), describe(v, depth + 1, inner)] for k, v in value.items()]
        return ["dict", sorted(pairs, key=_key)]
    if inspect.ismodule(value) or inspect.isroutine(value) or inspect.isclass(value):
        return ["ref", getattr(value, "__qualname__", getattr(value, "__name__", "?"))]
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return ["obj", type(value).__qualname__, describe(fields, depth + 1, inner)]
    return ["repr", type(value).__qualname__, _ADDRESS.sub("", repr(value))[:500]]


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def resolve(path: str, qualname: str) -> Any:
    """The function a (file, qualified name) names in the tree in the current folder; None when it cannot
    be reached from outside (a nested function)."""
    if "<locals>" in qualname:
        return None
    module_name = path.strip("/").removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    owner: Any = importlib.import_module(module_name)
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    found = vars(owner).get(parts[-1]) if inspect.isclass(owner) else getattr(owner, parts[-1], None)
    if isinstance(found, (classmethod, staticmethod)):
        found = found.__func__
    if isinstance(found, property):
        found = found.fget
    return inspect.unwrap(found) if callable(found) else None


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def replay(calls_file: str, seconds: float, budget: float) -> None:
    sys.path.insert(0, os.getcwd())
    with open(calls_file, "rb") as f:
        data = pickle.load(f)
    targets = data["targets"]
    print(json.dumps({"captured": data.get("captured", 0), "not_picklable": data.get("skipped", 0)}), flush=True)
    functions: dict[int, Any] = {}
    signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    for number, raw in enumerate(data["calls"]):
        if time.monotonic() - started > budget:
            print(json.dumps({"i": number, "stop": "budget"}), flush=True)
            break
        row: dict[str, Any] = {"i": number, "v": number >= data.get("captured", len(data["calls"]))}
        try:
            index, positional, keywords = pickle.loads(raw)
            if index not in functions:
                functions[index] = resolve(*targets[index])
            function = functions[index]
        except Exception as exc:
            row["skip"] = f"cannot load: {type(exc).__name__}: {exc}"[:300]
            print(json.dumps(row), flush=True)
            continue
        if function is None:
            row["skip"] = f"{targets[index][1]} cannot be called from outside its module"
            print(json.dumps(row), flush=True)
            continue
        begun = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            outcome: Any = ["returned", describe(function(*positional, **keywords))]
        except _Timeout:
            outcome = ["timeout"]
        except BaseException as exc:  # what it raised is part of its behaviour
            outcome = ["raised", type(exc).__qualname__]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        row["s"] = round(time.perf_counter() - begun, 6)
        picture = json.dumps([outcome, describe(positional), describe(keywords)], sort_keys=True, default=str)
        row["h"] = hashlib.sha256(picture.encode()).hexdigest()[:16]
        row["o"] = outcome[0]
        row["t"] = picture[:160]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "replay":
        replay(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0,
               float(sys.argv[4]) if len(sys.argv) > 4 else 60.0)
    else:
        print("usage: probe.py replay CALLS [SECONDS] [BUDGET]", file=sys.stderr)
        sys.exit(2)
