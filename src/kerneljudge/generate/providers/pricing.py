"""Prices: what a call cost in USD, estimated from a table of list prices per million tokens."""

from __future__ import annotations

from typing import Any, Mapping


# USD per million tokens (input, output), matched by the longest prefix of the model name (a vendor
# prefix such as "openai/" is ignored). List prices as published in 2025; check them before quoting a
# bill. A model missing here gets cost_usd=None; pass prices={...} to get_provider to add or override.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4-turbo": (10.00, 30.00),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-opus": (15.00, 75.00),
    "claude-3-haiku": (0.25, 1.25),
}


def price_for(model: str, prices: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    table = {**PRICES, **(prices or {})}
    for name in (model, model.rsplit("/", 1)[-1]):
        best = max((p for p in table if name.startswith(p)), key=len, default=None)
        if best is not None:
            return table[best]
    return None


def estimate_cost(model: str, usage: Mapping[str, Any],
                  prices: Mapping[str, tuple[float, float]] | None = None) -> float | None:
    """USD for one call from the price table, or None when the model is not in it."""
    price = price_for(model, prices)
    if price is None:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return round((prompt * price[0] + completion * price[1]) / 1e6, 8)


__all__ = ["PRICES", "price_for", "estimate_cost"]
