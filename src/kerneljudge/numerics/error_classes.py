"""Ordering the numerics classes of docs/numerics.md (exact < fp32/fp16/bf16 < tf32 < wrong), and the names of
the workload counts: plain data.

The orchestrator merges the classes of many comparisons with these; it does so without importing torch.
"""

from __future__ import annotations

import math
from typing import Any

# the counts numerics/arithmetic.py makes and the bounds take (one name each, everywhere they travel)
WORKLOAD_KEYS = ("reduction_length", "worst_case_roundings", "matmul_stages", "op_stages", "transcendental_stages")
_RANK = {"exact": 0, "fp32": 1, "fp16": 1, "bf16": 1, "tf32": 2, "wrong": 3}


def reduced(numerics: dict[str, Any] | None) -> bool:
    """Is this error of a reduced-precision class (tf32) or worse?"""
    return _RANK.get((numerics or {}).get("class", "exact"), 3) >= _RANK["tf32"]


def worse(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """The worse of two numerics dicts: by class (exact < fp32/fp16/bf16 < tf32 < wrong), then rel_l2."""
    if a is None or b is None:
        return a if b is None else b
    key_a = (_RANK.get(a.get("class", "wrong"), 3), or_inf(a.get("rel_l2")))
    key_b = (_RANK.get(b.get("class", "wrong"), 3), or_inf(b.get("rel_l2")))
    return b if key_b > key_a else a


def or_inf(x: float | None) -> float:
    return math.inf if x is None else float(x)
