"""How many timed calls are enough, and what they sum up to: plain statistics, no torch.

Kept apart from worker/timing.py (which binds torch's clocks) so that the orchestrator can size and
summarise timing rounds without importing torch: a cold `kerneljudge eval` then pays for torch's import only
in the processes that run models.
"""

from __future__ import annotations

import math
from typing import Any


def median_ci(samples: list[float]) -> tuple[float, float, float]:
    """Median and a distribution-free 95% confidence interval from order statistics."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    med = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)))
    return med, xs[lo], xs[hi]


class SamplingPlan:
    """Adaptive stopping: warm up until stable, then sample until the median is tight or time is up."""

    def __init__(self, device: str, budget_s: float):
        gpu = device == "cuda"
        self.budget_s = budget_s
        self.min_warmup = 3
        self.max_warmup = 50 if gpu else 10
        self.min_samples = 10 if gpu else 5
        self.max_samples = 2000 if gpu else 200
        # stop once the median's 95% interval is this close (relative half-width); most kernels get there far
        # sooner than the budget (on the CPU, 2 shared cores never do, so the budget decides there)
        self.rel_ci = 0.005 if gpu else 0.03

    def warm(self, recent: list[float], elapsed_s: float) -> bool:
        """True once warm-up can stop: the last three calls agree within 10%, or warm-up used its share."""
        if len(recent) < self.min_warmup:
            return False
        if len(recent) >= self.max_warmup or elapsed_s > 0.25 * self.budget_s:
            return True
        a, b, c = recent[-3:]
        return max(a, b, c) <= 1.1 * min(a, b, c)

    def converged(self, samples: list[float]) -> bool:
        """Enough samples, and the median's 95% interval within the relative target."""
        if len(samples) < self.min_samples:
            return False
        med, lo, hi = median_ci(samples)
        return med > 0 and (hi - lo) / 2 <= self.rel_ci * med

    def done_together(self, series: list[list[float]], elapsed_s: float) -> bool:
        """Stopping rule for several models timed in alternating rounds (elapsed_s: all of them together):
        every median tight, or the shared budget used with enough samples of each, or 5x that budget, or a
        series at its sample cap."""
        budget = self.budget_s * len(series)
        if any(len(s) >= self.max_samples for s in series) or elapsed_s > 5 * budget:
            return True
        if any(len(s) < self.min_samples for s in series):
            return False
        return elapsed_s > budget or all(self.converged(s) for s in series)

    def done(self, samples: list[float], elapsed_s: float) -> bool:
        n = len(samples)
        if n < self.min_samples:
            return elapsed_s > 5 * self.budget_s  # a very slow model: stop at 5x budget
        if n >= self.max_samples or elapsed_s > self.budget_s:
            return True
        med, lo, hi = median_ci(samples)
        return med > 0 and (hi - lo) / 2 <= self.rel_ci * med


def summarize(samples: list[float], warmup_calls: int, clocks: list[str]) -> dict[str, Any]:
    med, lo, hi = median_ci(samples)
    n = len(samples)
    mean = sum(samples) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in samples) / n) if n > 1 else 0.0
    clock = "host+device_idle" if "host+device_idle" in clocks else (clocks[0] if clocks else "host")
    return {
        "median_ms": med, "mean_ms": mean, "min_ms": min(samples), "max_ms": max(samples), "std_ms": std,
        "ci95_low_ms": lo, "ci95_high_ms": hi, "samples": n, "warmup_calls": warmup_calls, "clock": clock,
        "host_clock_samples": sum(c == "host+device_idle" for c in clocks),
    }
