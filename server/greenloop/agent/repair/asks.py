"""A round's requests to the model: started ahead of the candidates that read them, and stopped once known to echo.

As many requests are out at once as the client sends together (`LLMClient.concurrency`: `llm.concurrency`,
at most the embedded server's slots, 1 after a 429), so a round's candidates are decoded together; each has
its seed and temperature from the moment it is sent, in the order asked. With one at a time nothing is
sent ahead: a candidate is asked when the round reaches it, as before. A streamed reply whose form knows it
gives the code back unchanged (`Form.known_echo`) is closed there; what came is read as the reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from greenloop.agent.repair.splice import has_code_block
from greenloop.llm import LLMClient, tokens_spent


@dataclass(frozen=True)
class Answer:
    """A candidate's reply and the tokens its calls took (its own, whatever else was out at once)."""

    text: str
    tokens: int


@dataclass
class Sent:
    """One candidate's request, out before the round reads it."""

    seed: int | None
    temperature: float
    reply: asyncio.Task[Answer]


@dataclass
class Asking:
    """What the round's form asks and how it reads a reply as it streams."""

    step: str  # the calls' step name, e.g. "repair_function"
    please: str  # what a reply of prose alone is asked next ("" nothing)
    echoes: Callable[[str], bool]  # whether a reply that begins so is known to give the code back unchanged
    given: Callable[[int], bool]  # whether candidate i's reply is known without a model
    asks_model: bool = True


class RoundAsks:
    """The requests of one round, by candidate index."""

    def __init__(self, llm: LLMClient, messages: list[dict[str, str]], next_seed: Callable[[], int | None],
                 asking: Asking, limit: int | None) -> None:
        self.llm, self.messages, self.next_seed, self.asking, self.limit = llm, messages, next_seed, asking, limit
        self.sent: dict[int, Sent] = {}

    def send_ahead(self, index: int, count: int, temperature: Callable[[int], float]) -> None:
        """Send the requests of candidates `index`.. while fewer than the client sends at once are out."""
        if not self.asking.asks_model or self.llm.concurrency <= 1:
            return
        out = sum(1 for sent in self.sent.values() if not sent.reply.done())
        for ahead in range(index, count + 1):
            if out >= self.llm.concurrency:
                return
            if ahead in self.sent or self.asking.given(ahead):
                continue
            seed, hot = self.next_seed(), temperature(ahead)
            self.sent[ahead] = Sent(seed, hot, asyncio.ensure_future(self.ask(seed, hot)))
            out += 1

    def take(self, index: int) -> Sent | None:
        """The request sent ahead for candidate `index`, if one was."""
        return self.sent.pop(index, None)

    async def ask(self, seed: int | None, temperature: float, messages: list[dict[str, str]] | None = None) -> Answer:
        """One candidate's reply; a reply of prose alone is asked once for its code (the prefix is shared)."""
        asking, llm = self.asking, self.llm
        messages = messages or self.messages
        with tokens_spent() as spent:
            reply = await _complete(llm, messages, asking.step, self.limit, seed, temperature, asking.echoes)
            if asking.please and not has_code_block(reply) and reply.strip():
                # the 1.5B model said what was wrong and stopped; asked for the code, it gives it
                follow = [*messages, {"role": "assistant", "content": reply},
                          {"role": "user", "content": asking.please}]
                more = await _complete(llm, follow, asking.step, self.limit, seed, temperature, asking.echoes)
                reply = f"{reply}\n{more}"
        return Answer(reply, sum(spent))

    async def cancel(self) -> None:
        """Stop the requests no candidate read (a green came first): closing each stream frees its slot."""
        tasks = [sent.reply for sent in self.sent.values()]
        self.sent.clear()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


async def _complete(llm: LLMClient, messages: list[dict[str, str]], step: str, limit: int | None, seed: int | None,
                    temperature: float, stop: Callable[[str], bool]) -> str:
    return await llm.complete(messages, step=step, max_tokens=limit, seed=seed, temperature=temperature, stop=stop)
