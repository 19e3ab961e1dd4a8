"""A speedup's 95% interval, and fast_p's interval rule: a speedup whose interval includes 1.0 is not faster.

fast_p counts a solution faster than the reference by p when its speedup is above p. A speedup is a ratio of
two medians, each known to within an interval, so a point estimate of 1.03 may be the judge's noise on an
equal pair. Under the interval rule a row counts as faster at p >= 1 only when its speedup is above p AND the
95% interval of that speedup lies wholly above 1.0 (the interval is tested against 1, the question "is it
faster at all?", not against p). Below p = 1 the rule changes nothing: fast_0 is correctness, and fast_0.5
asks for a solution no more than twice as slow. A row whose interval is not known does not count as faster
under the rule (unknown is not evidence): `interval_counts` says how many such rows there were.

Where the interval comes from (verdict fields as README.md describes them):
  clock end_to_end (the default)  `speedup_ci95`, from the two medians' intervals, worst against worst
  clock device                    `ref_timing.device.ci95_ms` and `sol_timing.device.ci95_ms` the same way
                                  (graph replays carry them; the profiler's median of three calls does not);
                                  `device_clock` host (the CPU) is the end-to-end clock, so `speedup_ci95`
  another baseline (score --baseline)  the baseline's time is a fixed number: baseline ms over the
                                  solution's median interval (`sol_timing.ci95_low_ms` .. `ci95_high_ms`)
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from kerneljudge.results.verdict_rows import problem_of, qualifies, speedup_of

RULE_FROM_P = 1.0     # the rule applies at p >= this; below it, fast_p is as it always was


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _pair(value: Any) -> Optional[tuple[float, float]]:
    """(low, high) from a two-number list of positive, finite numbers with low <= high; None otherwise."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    low, high = value
    if not (_positive(low) and _positive(high)) or low > high:
        return None
    return float(low), float(high)


def _ratio_interval(ref: Optional[tuple[float, float]],
                    sol: Optional[tuple[float, float]]) -> Optional[tuple[float, float]]:
    """The interval of ref / sol from the two sides' intervals, each side's worst case against the other's."""
    if ref is None or sol is None:
        return None
    return ref[0] / sol[1], ref[1] / sol[0]


def _device_ci(v: Mapping[str, Any], side: str) -> Optional[tuple[float, float]]:
    timing = v.get(f"{side}_timing")
    device = timing.get("device") if isinstance(timing, Mapping) else None
    return _pair(device.get("ci95_ms")) if isinstance(device, Mapping) else None


def device_speedup_interval(v: Mapping[str, Any]) -> Optional[tuple[float, float]]:
    """The 95% interval of `speedup_device`; None where the device times carry none (the profiler)."""
    if v.get("device_clock") == "host":   # on the CPU the device clock is the end-to-end one
        return _pair(v.get("speedup_ci95"))
    return _ratio_interval(_device_ci(v, "ref"), _device_ci(v, "sol"))


def speedup_interval(v: Mapping[str, Any],
                     baseline: Optional[Mapping[str, float]] = None) -> Optional[tuple[float, float]]:
    """The 95% interval of the speedup fast_p uses for this row (`speedup_of(v, baseline)`); None if unknown."""
    if baseline is not None:
        base = baseline.get(problem_of(v))
        timing = v.get("sol_timing")
        if not _positive(base) or not isinstance(timing, Mapping):
            return None
        sol = _pair([timing.get("ci95_low_ms"), timing.get("ci95_high_ms")])
        return _ratio_interval((float(base), float(base)), sol)
    if v.get("clock") == "device":
        return device_speedup_interval(v)
    return _pair(v.get("speedup_ci95"))


def qualifies_by_interval(v: Mapping[str, Any], p: float, baseline: Optional[Mapping[str, float]] = None) -> bool:
    """fast_p's test under the interval rule: verdict_rows.qualifies, and at p >= 1 a speedup interval that
    lies wholly above 1.0."""
    if not qualifies(v, p, baseline):
        return False
    if p < RULE_FROM_P:
        return True
    interval = speedup_interval(v, baseline)
    return interval is not None and interval[0] > 1.0


def interval_counts(rows: list[Mapping[str, Any]], baseline: Optional[Mapping[str, float]] = None) -> dict[str, int]:
    """Among accepted rows whose speedup is above 1: how many the interval rule keeps as faster ("clear"), how
    many it does not because their interval includes 1.0 ("includes_1"), and because none is known ("unknown")."""
    counts = {"faster": 0, "clear": 0, "includes_1": 0, "unknown": 0}
    for v in rows:
        speedup = speedup_of(v, baseline)
        if not v.get("accepted") or speedup is None or not speedup > 1.0:
            continue
        counts["faster"] += 1
        interval = speedup_interval(v, baseline)
        if interval is None:
            counts["unknown"] += 1
        elif interval[0] > 1.0:
            counts["clear"] += 1
        else:
            counts["includes_1"] += 1
    return counts
