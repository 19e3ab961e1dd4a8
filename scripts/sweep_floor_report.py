"""The noise floor in the upstream sweep's report (scripts/upstream_sweep_report.py): per problem, the identity
copy's speedup under each clock with its 95% interval and the device clock that took it, and the shares of copies
near 1 and far from it, per clock and per device clock. Pure functions over verdict dicts and the floor that
kerneljudge.results.noise_floor.build_floor makes of them (the sweep writes it as OUT/floor.json, which
`kerneljudge score --floor` and `kerneljudge report --floor` read).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Mapping

NEAR_ONE = (0.98, 1.02)    # an identity copy's speedup inside this band counts as "no difference"
WIDE = (0.95, 1.05)        # outside this band, an identity copy's speedup is a clear miss


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def shares(values: list[float]) -> dict[str, Any]:
    """How many speedups, and the shares within NEAR_ONE and outside WIDE (None for no values)."""
    n = len(values)
    within = sum(1 for x in values if NEAR_ONE[0] <= x <= NEAR_ONE[1])
    outside = sum(1 for x in values if not WIDE[0] <= x <= WIDE[1])
    return {"count": n, "within_near": within / n if n else None, "outside_wide": outside / n if n else None}


def device_clock_shares(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The device clock's shares per way it was taken (cuda_graph, profiler; host on the CPU)."""
    by_method: dict[str, list[float]] = defaultdict(list)
    for v in verdicts:
        speedup = _number(v.get("speedup_device"))
        if speedup is not None:
            by_method[str(v.get("device_clock"))].append(speedup)
    return {method: shares(values) for method, values in sorted(by_method.items())}


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def _speedup(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "-"
    ci = entry.get("ci95")
    return f"{entry['speedup']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _band(entry: Mapping[str, Any] | None) -> str:
    return f"{entry['band'][0]:.3f}-{entry['band'][1]:.3f}" if entry else "-"


def floor_lines(summary: Mapping[str, Any], table) -> list[str]:
    """The report's noise-floor section; `table(header, rows)` renders a markdown table."""
    floor, by_method = summary.get("floor") or {}, summary.get("device_clock_shares") or {}
    problems = floor.get("problems") or {}
    lines = ["## Noise floor per problem", "",
             f"Each accepted identity copy's speedup with its 95% interval, per clock, and the band a solution's "
             f"speedup must leave to count as more than noise (`kerneljudge score --floor floor.json`; the band is "
             f"the farthest of speedup and interval from 1, both ways on a log scale). {len(problems)} problems "
             "have a floor; the rest were not accepted and timed.", ""]
    if by_method:
        lines += ["Device clock, by the way its times were taken:", ""]
        lines += table(["device clock", "copies", f"within [{NEAR_ONE[0]}, {NEAR_ONE[1]}]",
                        f"outside [{WIDE[0]}, {WIDE[1]}]"],
                       [[m, s["count"], _pct(s["within_near"]), _pct(s["outside_wide"])]
                        for m, s in by_method.items()]) + [""]
    rows = []
    for pid, entry in sorted(problems.items()):
        e2e, device = entry.get("end_to_end"), entry.get("device")
        rows.append([pid, _speedup(e2e), _band(e2e), _speedup(device), (device or {}).get("device_clock") or "-",
                     _band(device)])
    if rows:
        lines += table(["problem", "speedup_end_to_end [ci95]", "band", "speedup_device [ci95]", "device clock",
                        "band"], rows) + [""]
    return lines
