"""Redaction rules: what is removed from the judge's text before a model sees it.

    sanitize_text(text, hidden_shapes=None) -> str         all rules below, on one text
    redact_seeds(text) -> str                              seeds and very long integers
    redact_held_out_reason(text) -> (text, hidden)         the judge's "at a held-out shape (...)" clause
    redactor(hidden_shapes) -> (str -> str)                seeds, long integers and the given held-out shapes

A model never sees, in feedback, a seed or a held-out shape: "seed=N" (also seeds, init_seed, "seed: N")
keeps its name and loses its value, integers of 14 digits or more become "<number>"; the judge's "wrong at
a held-out shape (k=v, ...)" reason is rewritten to "wrong at a shape not shown to you" and the indices,
shapes and "N of M" counts that follow it are hidden; with `hidden_shapes` (see scrub.held_out_shapes())
every "key=value" of a held-out preset, every shape list or tuple holding one of its sizes, and every size
(or size product) of 10 or more standing alone is hidden too.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping

_SEED = re.compile(r"\b((?:init_)?seeds?)\b(\s*[=:]?\s*)-?\d+", re.IGNORECASE)
_LONG_INT = re.compile(r"(?<![\w.])\d{14,}(?![\w.])")
_HELD_OUT_OPEN = "at a held-out shape ("
_INT_SEQ = re.compile(r"torch\.Size\(\[\s*(?:-?\d+\s*,?\s*)*\]\)|[\[(]\s*-?\d+\s*(?:,\s*-?\d+\s*)*,?\s*[\])]")
_COUNT_OF = re.compile(r"\b\d+ of \d+\b")


def redact_seeds(text: str) -> str:
    """The text with seed values and integers of 14 or more digits hidden."""
    text = _SEED.sub(lambda m: f"{m.group(1)}{m.group(2)}<hidden>", text)
    return _LONG_INT.sub("<number>", text)


def redact_held_out_reason(text: str) -> tuple[str, bool]:
    """Replace "at a held-out shape (k=v, ...)" and hide the shape details after it; (text, whether it did)."""
    start = text.find(_HELD_OUT_OPEN)
    if start < 0:
        return text, False
    depth, i = 1, start + len(_HELD_OUT_OPEN)
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    tail = text[i:]
    tail = _INT_SEQ.sub(lambda m: "(hidden)" if m.group(0).lstrip().startswith(("(", "torch")) else "[hidden]", tail)
    tail = _COUNT_OF.sub("some", tail)
    return f"{text[:start]}at a shape not shown to you{tail}", True


def _hidden_values(hidden_shapes: Iterable[Mapping[str, Any]] | None) -> tuple[set[int], list[tuple[str, str]]]:
    values: set[int] = set()
    pairs: list[tuple[str, str]] = []
    for preset in hidden_shapes or []:
        product = 1
        for key, value in preset.items():
            pairs.append((str(key), str(value)))
            ints = [v for v in _flatten(value) if isinstance(v, int) and not isinstance(v, bool)]
            values.update(ints)
            for v in ints:
                product *= v
        if product > 1:
            values.add(product)
    return values, pairs


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _redact_hidden(text: str, values: set[int], pairs: list[tuple[str, str]]) -> str:
    if not values and not pairs:
        return text
    for key, value in pairs:
        text = re.sub(rf"\b{re.escape(key)}\s*=\s*{re.escape(value)}(?![\w.])", f"{key}=<hidden>", text)

    def seq(m: re.Match) -> str:
        ints = {int(x) for x in re.findall(r"-?\d+", m.group(0))}
        if ints & values:
            return "(hidden)" if m.group(0).lstrip().startswith(("(", "torch")) else "[hidden]"
        return m.group(0)

    text = _INT_SEQ.sub(seq, text)
    big = sorted((v for v in values if abs(v) >= 10), key=lambda v: -len(str(v)))
    if big:
        text = re.sub(r"(?<![\w.])(" + "|".join(str(v) for v in big) + r")(?![\w.])", "<hidden>", text)
    return text


def redactor(hidden_shapes: Iterable[Mapping[str, Any]] | None = None) -> Callable[[str], str]:
    """A function that hides the held-out shapes' values, then seeds and very long integers, in a text."""
    values, pairs = _hidden_values(hidden_shapes)
    return lambda text: redact_seeds(_redact_hidden(text, values, pairs))


def sanitize_text(text: str, hidden_shapes: Iterable[Mapping[str, Any]] | None = None) -> str:
    """A judge's text with seeds, very long integers and held-out shapes removed."""
    text, _ = redact_held_out_reason(text or "")
    return redactor(hidden_shapes)(text)
