"""Retrieval: from a failing test to the code it is about (tree-sitter).

`RepoIndex` holds every file's definitions and references; `locate` ranks the
code a set of failures is about (never test code); `spec_locations` returns
the test code they come from, to show as the spec; `pack_code` packs the ranking into prompt
text within a token budget; `outline` lists what a file defines, without bodies; a `Spectrum` (the failing tests under
coverage, `SpectrumCache` once per run) adds the `executed` signal. Imports nothing from agent/, llm/ or lsp/.
"""

from greenloop.retrieval.frames import parse_frames
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.languages import language_of
from greenloop.retrieval.model import CodePack, Definition, FileSymbols, Frame, Location, Signal
from greenloop.retrieval.outline import outline, public_names, top_level
from greenloop.retrieval.packing import pack_code
from greenloop.retrieval.rank import locate, spec_locations
from greenloop.retrieval.spectra import SpectrumCache
from greenloop.tokens import count_text as count_tokens

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
    "language_of",
    "locate",
    "outline",
    "pack_code",
    "parse_frames",
    "public_names",
    "spec_locations",
    "top_level",
]
