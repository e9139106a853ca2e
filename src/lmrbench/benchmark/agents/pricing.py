"""The price of model calls in dollars, from the price table litellm ships (read as a file: litellm itself is
not imported), for the agent's cost limit; 0 for a model the table does not know (a local one)."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

from lmrbench.schemas.run import Usage

_TABLE = "model_prices_and_context_window_backup.json"


@functools.cache
def _prices() -> dict[str, tuple[float, float]]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / _TABLE
    try:
        table = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for name, entry in table.items():
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            out[name] = (float(entry.get("input_cost_per_token") or 0), float(entry.get("output_cost_per_token") or 0))
    return out


def known(model: str) -> bool:
    """Whether the price table knows ``model`` (with or without a provider prefix such as ``openai/``)."""
    return _entry(model) is not None


def _entry(model: str) -> tuple[float, float] | None:
    prices = _prices()
    return prices.get(model) or prices.get(model.split("/", 1)[-1])


def price(model: str, usage: Usage) -> float:
    """Dollars for ``usage`` of ``model`` (0 when its price is not known)."""
    entry = _entry(model)
    if entry is None:
        return 0.0
    return entry[0] * usage.prompt_tokens + entry[1] * usage.completion_tokens
