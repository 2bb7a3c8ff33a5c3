"""The model server's own token count, for servers that have one (llama.cpp's `POST /tokenize`).

Asked only when the offline estimate says a request may not fit the context window: the
estimate is another model's tokenizer with a margin, and the server's count needs none. A
server without the route (OpenAI, vLLM's differs) is asked once, then never again.
"""

from __future__ import annotations

import httpx

from greenloop.tokens import PER_MESSAGE_OVERHEAD

Messages = list[dict[str, str]]


class ServerTokenizer:
    """Counts a chat request's tokens with the server's tokenizer; None when the server has none."""

    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        self.url = f"{root}/tokenize"
        self.timeout = timeout
        self.available: bool | None = None  # None: not asked yet

    async def count(self, messages: Messages) -> int | None:
        if self.available is False:
            return None
        total = 3
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                for message in messages:
                    answer = await http.post(self.url, json={"content": message.get("content") or ""})
                    answer.raise_for_status()
                    total += len(answer.json()["tokens"]) + PER_MESSAGE_OVERHEAD
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            self.available = False
            return None
        self.available = True
        return total
