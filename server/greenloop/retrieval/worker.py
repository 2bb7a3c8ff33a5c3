"""A parsing worker process: batches of (path, grammar, bytes) on stdin -> their FileSymbols on stdout.

Started by `RepoIndex` as `python -m greenloop.retrieval.worker` for cold
indexing. A plain child process (not multiprocessing) so it never re-imports
the caller's main module and works from any script, server or test. It
imports only the parsing code (tree-sitter, `tags`): the caller names each
file's grammar, so the language records are not loaded here either.

Each message either way is one pickle behind its length (8 bytes, little
endian): the caller hands out small batches as workers free up, so one slow
worker never holds up the rest. The worker ends at end of input.
"""

from __future__ import annotations

import gc
import pickle
import sys
from typing import BinaryIO

from greenloop.retrieval.tags import extract_as

HEADER_BYTES = 8


def frame(payload: bytes) -> bytes:
    """`payload` behind its length, as both sides write it."""
    return len(payload).to_bytes(HEADER_BYTES, "little") + payload


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """Answer each batch read from `source` with its symbols, in order, until `source` ends."""
    while header := source.read(HEADER_BYTES):
        size = int.from_bytes(header, "little")
        items: list[tuple[str, str | None, bytes]] = pickle.loads(source.read(size))
        results = [extract_as(language, path, data) for path, language, data in items]
        sink.write(frame(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)))
        sink.flush()


def main() -> int:
    # Parsing makes no reference cycles (refcounting frees it all) and the process lives one cold
    # index: the cyclic collector would only walk the growing results, ~3% of the CPU.
    gc.disable()
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
