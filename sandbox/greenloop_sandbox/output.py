"""Bounded capture of a command's output: keeps the head and the tail, marks the cut."""

from __future__ import annotations

from collections import deque


class CappedOutput:
    """Accumulates bytes up to `limit`: the first half verbatim, then a rolling tail."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 64)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total = 0

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        room = self.limit // 2 - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_len += len(chunk)
        keep = self.limit - self.limit // 2
        while self._tail and self._tail_len - len(self._tail[0]) >= keep:
            self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        tail = b"".join(self._tail)
        keep = self.limit - self.limit // 2
        dropped = self.total - len(self._head) - min(len(tail), keep)
        if dropped > 0:
            tail = tail[-keep:]
            marker = f"\n[... greenloop: {dropped} bytes of output cut ...]\n".encode()
            data = bytes(self._head) + marker + tail
        else:
            data = bytes(self._head) + tail
        return data.decode("utf-8", errors="replace")


def cap_text(text: str, limit: int) -> tuple[str, bool]:
    """`text` capped to about `limit` bytes (head and tail kept); and whether it was cut."""
    out = CappedOutput(limit)
    out.feed(text.encode("utf-8", errors="replace"))
    return out.text(), out.truncated
