"""Percentile bootstrap intervals over problems, deterministic for a seed.

bootstrap() resamples any list of groups (one per problem) and takes the percentile interval of a
statistic; bootstrap_ci() does it over verdict rows, keeping all rows of a problem together.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from kerneljudge.results.verdict_rows import Row, judgeable, problem_of


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap(groups: Sequence[Any], statistic: Callable[[list[Any]], Optional[float]], n_boot: int, seed: int,
              confidence: float) -> Optional[list[float]]:
    """Percentile interval of statistic over n_boot resamples (with replacement) of the groups."""
    if not groups or n_boot < 1:
        return None
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    rng = random.Random(seed)
    n = len(groups)
    stats = []
    for _ in range(n_boot):
        value = statistic([groups[rng.randrange(n)] for _ in range(n)])
        if value is not None and not math.isnan(value):
            stats.append(value)
    if not stats:
        return None
    stats.sort()
    alpha = (1 - confidence) / 2
    return [_quantile(stats, alpha), _quantile(stats, 1 - alpha)]


def bootstrap_ci(verdicts: Iterable[Mapping[str, Any]], statistic: Callable[[list[Row]], Optional[float]], *,
                 n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> Optional[tuple[float, float]]:
    """Percentile bootstrap interval for statistic(rows), resampling problems (all rows of a problem go
    together; a problem drawn twice counts twice, under distinct ids). Unjudgeable rows are left out before
    resampling. Deterministic for a seed; None without rows or when the statistic is None on every resample."""
    by_problem: dict[str, list[Mapping[str, Any]]] = {}
    for v in judgeable(verdicts):
        by_problem.setdefault(problem_of(v), []).append(v)
    groups = [by_problem[pid] for pid in sorted(by_problem)]

    def on_draw(drawn: list[list[Mapping[str, Any]]]) -> Optional[float]:
        rows = [{**v, "problem_id": f"{problem_of(v)}#{i}"} for i, group in enumerate(drawn) for v in group]
        return statistic(rows)

    ci = bootstrap(groups, on_draw, n_boot, seed, confidence)
    return (ci[0], ci[1]) if ci else None
