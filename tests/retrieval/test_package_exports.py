"""The package's exports are the functions and classes, whatever was imported before them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import greenloop.retrieval

ORDERS = [
    "import greenloop.retrieval.outline; from greenloop.retrieval import outline",
    "import greenloop.retrieval.rank; from greenloop.retrieval import locate as outline",
    "import greenloop.retrieval.worker; from greenloop.retrieval import outline",
    "from greenloop.retrieval import outline",
]


@pytest.mark.parametrize("statement", ORDERS)
def test_an_export_is_never_the_submodule_of_the_same_name(statement: str) -> None:
    # a fresh interpreter: the order of first imports is the point
    code = f"{statement}; import types; assert callable(outline) and not isinstance(outline, types.ModuleType)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_name_in_all_resolves() -> None:
    for name in greenloop.retrieval.__all__:
        assert getattr(greenloop.retrieval, name) is not None, name
