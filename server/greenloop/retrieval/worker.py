"""A parsing worker process: pickled [(path, grammar, bytes)] on stdin -> pickled [FileSymbols] on stdout.

Started by `RepoIndex` as `python -m greenloop.retrieval.worker` for cold
indexing. A plain child process (not multiprocessing) so it never re-imports
the caller's main module and works from any script, server or test. It
imports only the parsing code (tree-sitter, `tags`): the caller names each
file's grammar, so the language records are not loaded here either.
"""

from __future__ import annotations

import pickle
import sys

from greenloop.retrieval.tags import extract_as


def main() -> int:
    items: list[tuple[str, str | None, bytes]] = pickle.load(sys.stdin.buffer)
    results = [extract_as(language, path, data) for path, language, data in items]
    pickle.dump(results, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
