"""The benchmark scripts as modules for the bench tests: benchmarks/*.py (and realbugs' build.py) loaded by path, once."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


def script(name: str, path: Path | None = None) -> ModuleType:
    """benchmarks/NAME.py (or PATH) as the module NAME. The scripts import their siblings by name, so
    benchmarks/ goes on sys.path first."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path or BENCHMARKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]
