"""Retrieval: from a failing test to the code it is about (tree-sitter).

`RepoIndex` holds every file's definitions and references; `locate` ranks the
code a set of failures is about (never test code); `spec_locations` returns
the test code they come from, to show as the spec; `pack_code` packs the ranking into prompt
text within a token budget; `executed_callees` the defs the top one calls that a failing test ran,
`path_from_tests` those from the test's calls down; `outline` lists what a file defines, without bodies;
a `Spectrum` (the failing tests under coverage, `SpectrumCache` once per run) adds the `executed` signal. Imports nothing from agent/, llm/ or lsp/.

The names below are imported on first use (PEP 562): the parsing worker
(`greenloop.retrieval.worker`) imports this package too, and starts in a
fraction of the time without ranking's dependencies (numpy, bm25s, tiktoken).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Eager: light (tags and model), and `outline` is also a submodule's name. Importing a submodule binds
# it on the package, so a lazy `outline` would become the module once anything imported
# `greenloop.retrieval.outline` first.
from greenloop.retrieval.outline import outline, public_names, top_level

if TYPE_CHECKING:
    from greenloop.retrieval.executed import line_scores
    from greenloop.retrieval.frames import parse_frames
    from greenloop.retrieval.index import RepoIndex
    from greenloop.retrieval.languages import language_of
    from greenloop.retrieval.model import CodePack, Definition, FileSymbols, Frame, Location, Signal
    from greenloop.retrieval.packing import pack_code
    from greenloop.retrieval.rank import locate, spec_locations
    from greenloop.retrieval.related import executed_callees, path_from_tests
    from greenloop.retrieval.spectra import SpectrumCache
    from greenloop.tokens import count_text as count_tokens

# Exported name -> (module, name there).
_EXPORTS: dict[str, tuple[str, str]] = {
    "CodePack": ("greenloop.retrieval.model", "CodePack"),
    "Definition": ("greenloop.retrieval.model", "Definition"),
    "FileSymbols": ("greenloop.retrieval.model", "FileSymbols"),
    "Frame": ("greenloop.retrieval.model", "Frame"),
    "Location": ("greenloop.retrieval.model", "Location"),
    "RepoIndex": ("greenloop.retrieval.index", "RepoIndex"),
    "Signal": ("greenloop.retrieval.model", "Signal"),
    "SpectrumCache": ("greenloop.retrieval.spectra", "SpectrumCache"),
    "count_tokens": ("greenloop.tokens", "count_text"),
    "executed_callees": ("greenloop.retrieval.related", "executed_callees"),
    "language_of": ("greenloop.retrieval.languages", "language_of"),
    "line_scores": ("greenloop.retrieval.executed", "line_scores"),
    "locate": ("greenloop.retrieval.rank", "locate"),
    "pack_code": ("greenloop.retrieval.packing", "pack_code"),
    "parse_frames": ("greenloop.retrieval.frames", "parse_frames"),
    "spec_locations": ("greenloop.retrieval.rank", "spec_locations"),
    "path_from_tests": ("greenloop.retrieval.related", "path_from_tests"),
}

__all__ = [
    "CodePack",
    "Definition",
    "FileSymbols",
    "Frame",
    "Location",
    "RepoIndex",
    "Signal",
    "SpectrumCache",
    "count_tokens",
    "executed_callees",
    "language_of",
    "line_scores",
    "locate",
    "outline",
    "pack_code",
    "parse_frames",
    "path_from_tests",
    "public_names",
    "spec_locations",
    "top_level",
]


def __getattr__(name: str) -> object:
    """Import an exported name's module on first use, and keep the name here."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
