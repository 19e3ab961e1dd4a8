"""Scores over verdicts: pure functions over plain dicts (as stored in the JSONL run log)."""

from __future__ import annotations

from typing import Any, Iterable

FAST_P_THRESHOLDS = (0.0, 0.5, 1.0, 1.5, 2.0)


def fast_p(verdicts: Iterable[dict[str, Any]], p: float) -> float:
    """Share of solutions that are accepted (correct, no blocking flag) AND faster than the reference by > p.

    fast_0 is the accepted share whether or not the solutions were timed (as in the paper: correctness).
    """
    rows = list(verdicts)
    if not rows:
        return 0.0
    hits = sum(1 for v in rows if v.get("accepted") and (p == 0 or (v.get("speedup") or 0.0) > p))
    return hits / len(rows)


def fast_p_table(verdicts: Iterable[dict[str, Any]], thresholds: Iterable[float] = FAST_P_THRESHOLDS) -> dict[str, float]:
    rows = list(verdicts)
    return {f"fast_{p:g}": fast_p(rows, p) for p in thresholds}


def verdict_counts(verdicts: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.get("verdict", "?")] = counts.get(v.get("verdict", "?"), 0) + 1
    return counts
