"""fast_p curves: score.summary() evaluated on a grid of p from 0 to 4, and the curves read out of it.

Every number and every band comes from score.summary (fast_p averaged over problems, percentile
bootstrap over problems); nothing here scores on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from kerneljudge.results import score

P_MAX = 4.0
P_STEP = 0.1
# The plotted grid, plus the thresholds `kerneljudge score` prints (all of them lie on it).
GRID: tuple[float, ...] = tuple(sorted({round(i * P_STEP, 2) for i in range(int(P_MAX / P_STEP) + 1)}
                                       | set(score.FAST_P_SET)))
TABLE_P: tuple[float, ...] = score.FAST_P_SET
# Bootstrap resamples: the tables use score's default (same intervals as `kerneljudge score`); the bands
# of the curves, 41 thresholds each, use fewer (each threshold costs n_boot x problems random draws).
TABLE_BOOT = 1000
BAND_BOOT = 200


def key(p: float) -> str:
    return f"fast_{p:g}"


def table_summary(rows: Sequence[Mapping[str, Any]], baselines: Mapping[str, Mapping[str, float]] | None,
                  n_boot: int = TABLE_BOOT, seed: int = 0) -> dict[str, Any]:
    """score.summary as `kerneljudge score` computes it (its thresholds, ks and defaults)."""
    return score.summary(rows, baselines=dict(baselines or {}) or None, n_boot=n_boot, seed=seed)


def curve_summary(rows: Sequence[Mapping[str, Any]], baselines: Mapping[str, Mapping[str, float]] | None,
                  n_boot: int = BAND_BOOT, seed: int = 0) -> dict[str, Any]:
    """score.summary over GRID (ks=1: the curves need no fast_p@k; the interval rule is in the tables only)."""
    return score.summary(rows, baselines=dict(baselines or {}) or None, thresholds=GRID, ks=(1,),
                         n_boot=n_boot, seed=seed, interval_rule=False)


@dataclass(frozen=True)
class Curve:
    label: str
    p: list[float]
    value: list[float]
    low: Optional[list[float]]       # None when there is no band (no bootstrap, or per-turn curves)
    high: Optional[list[float]]


def curve_of(block: Mapping[str, Any], label: str) -> Curve:
    """The fast_p curve of one summary block (a baseline's, or one level's inside it)."""
    fast = block.get("fast_p", {})
    ps = [p for p in GRID if key(p) in fast]
    values = [float(fast[key(p)].get("value") or 0.0) for p in ps]
    cis = [fast[key(p)].get("ci") for p in ps]
    if ps and all(ci for ci in cis):
        return Curve(label, ps, values, [ci[0] for ci in cis], [ci[1] for ci in cis])
    return Curve(label, ps, values, None, None)


def turn_curves(block: Mapping[str, Any]) -> list[Curve]:
    """Best-so-far fast_p curves by refinement turn (empty for a run with one turn)."""
    by_turn = block.get("fast_p_by_turn") or {}
    turns = sorted({int(t) for per in by_turn.values() for t in per}, key=int)
    out = []
    for t in turns:
        ps = [p for p in GRID if str(t) in by_turn.get(key(p), {})]
        out.append(Curve(f"turn {t}" if t == 0 else f"by turn {t}", ps,
                         [float(by_turn[key(p)][str(t)]) for p in ps], None, None))
    return out


def levels_of(summaries: Sequence[Mapping[str, Any]], baseline: str) -> list[str]:
    """Levels (as summary keys) present in any of the summaries under baseline, in increasing order."""
    found = {lvl for s in summaries for lvl in s.get("baselines", {}).get(baseline, {}).get("by_level", {})}
    return sorted(found, key=int)


def baseline_names(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for s in summaries:
        for name in s.get("baselines", {}):
            if name not in names:
                names.append(name)
    return names
