"""The price of a model's tokens: `llm.prices` first, then the table shipped in `prices.toml`."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

from pydantic import ValidationError

from greenloop.errors import GreenloopError
from greenloop.settings import ModelPrice

SHIPPED = "greenloop/llm/prices.toml"
_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")  # gpt-4o-2024-08-06, claude-...-20250929


def parse_prices(table: Any, source: str) -> dict[str, ModelPrice]:
    """`{model: {prompt, completion}}` as ModelPrices; a malformed entry is an error naming it."""
    if not isinstance(table, dict):
        raise GreenloopError(f"{source}: the price table must be a table of models, not {type(table).__name__}.")
    out = {}
    for name, entry in table.items():
        try:
            out[name] = ModelPrice.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors())
            raise GreenloopError(
                f"{source}: price entry {name!r} is malformed ({problems}); write it as "
                "{ prompt = USD per million prompt tokens, completion = USD per million completion tokens }."
            ) from None
    return out


@cache
def shipped_prices() -> dict[str, ModelPrice]:
    """The table in the package (read once)."""
    text = resources.files("greenloop.llm").joinpath("prices.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GreenloopError(f"{SHIPPED}: not valid TOML ({exc}); reinstall greenloop.") from exc
    return parse_prices(data.get("models", {}), SHIPPED)


def price_of(overrides: dict[str, ModelPrice], model: str) -> ModelPrice | None:
    """The price of `model`: an `llm.prices` entry, else the shipped table's; None for unknown models.

    Tried in order: the name as sent, without a provider prefix ("openai/gpt-4o"), without a
    date or "-latest" suffix.
    """
    names = list(_names(model))
    for table in (overrides, shipped_prices()):
        for name in names:
            if name in table:
                return table[name]
    return None


def _names(model: str) -> Iterator[str]:
    yield model
    bare = model.rsplit("/", 1)[-1]
    yield bare
    yield _DATED.sub("", bare)
