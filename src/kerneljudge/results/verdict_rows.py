"""What one verdict row says to a score, and the scores that count each row once.

Pure functions over plain dicts (as stored in the JSONL run log). The row fields read here:
  problem_id   the problem (falls back to "problem"); problems are the unit of every per-problem average
  accepted     counts as correct (correct and no blocking flag)
  speedup      eager reference time / solution time (None when not timed)
  sol_ms       the solution's median time, used to re-base speedups on another baseline
  level        the problem's level (default: N from a problem_id "levelN/...", else 0)
  verdict      `unjudgeable` marks a row whose problem could not judge (problem_outcome says why)

Rows with verdict `unjudgeable` (the problem's reference could not judge: types.PROBLEM_OUTCOMES) are
neither correct nor wrong: every score leaves them out of its denominator, and a problem with no other
row out of per-problem averages. verdict_counts counts them like any verdict; left_out() says how many
rows and problems a score left out, and why.

fast_p / fast_p_table / verdict_counts count every row once; trajectory_scores.py scores generation runs
(several samples per problem, refinement turns).
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping, Optional

FAST_P_THRESHOLDS = (0.0, 0.5, 1.0, 1.5, 2.0)
UNJUDGEABLE = "unjudgeable"
_LEVEL_ID = re.compile(r"^level_?(\d+)/", re.IGNORECASE)

Row = dict[str, Any]


# --- which problem and level a row belongs to -----------------------------------------------------------


def problem_of(v: Mapping[str, Any]) -> str:
    return str(v.get("problem_id") or v.get("problem") or "?")


def level_of(v: Mapping[str, Any]) -> int:
    level = v.get("level")
    if isinstance(level, int) and not isinstance(level, bool):
        return level
    m = _LEVEL_ID.match(problem_of(v))
    return int(m.group(1)) if m else 0


# --- rows the problem could not judge ------------------------------------------------------------------


def is_unjudgeable(v: Mapping[str, Any]) -> bool:
    return v.get("verdict") == UNJUDGEABLE


def judgeable(verdicts: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The rows every score counts: all but the unjudgeable ones."""
    return [v for v in verdicts if not is_unjudgeable(v)]


def outcome_kind(v: Mapping[str, Any]) -> str:
    """The problem outcome's kind of an unjudgeable row ("unknown" when the row does not say)."""
    outcome = v.get("problem_outcome")
    kind = outcome.get("kind") if isinstance(outcome, Mapping) else None
    return str(kind) if kind else "unknown"


def left_out(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What the scores leave out: {"rows": unjudgeable rows, "problems": problems none of whose rows is
    judgeable (gone from per-problem averages), "by_kind": {kind: rows}}."""
    rows = list(verdicts)
    out = [v for v in rows if is_unjudgeable(v)]
    kept = {problem_of(v) for v in rows if not is_unjudgeable(v)}
    by_kind: dict[str, int] = {}
    for v in out:
        by_kind[outcome_kind(v)] = by_kind.get(outcome_kind(v), 0) + 1
    return {"rows": len(out), "problems": len({problem_of(v) for v in out} - kept),
            "by_kind": dict(sorted(by_kind.items()))}


def left_out_line(left: Mapping[str, Any]) -> str:
    """One line for text output; "" when nothing was left out."""
    if not left.get("rows"):
        return ""
    kinds = ", ".join(f"{n} {kind}" for kind, n in left.get("by_kind", {}).items())
    return (f"left out of every score: {left['rows']} unjudgeable row(s) ({kinds}); "
            f"{left.get('problems', 0)} problem(s) with no judgeable row")


# --- a row's speedup and whether it qualifies for fast_p -----------------------------------------------


def _finite_positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 and not math.isnan(x)


def speedup_of(v: Mapping[str, Any], baseline: Optional[Mapping[str, float]] = None) -> Optional[float]:
    """The row's speedup: against the eager reference (its "speedup"), or baseline[problem] / sol_ms."""
    if baseline is None:
        s = v.get("speedup")
        return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else None
    base, sol = baseline.get(problem_of(v)), v.get("sol_ms")
    if not _finite_positive(base) or not _finite_positive(sol):
        return None
    return float(base) / float(sol)


def qualifies(v: Mapping[str, Any], p: float, baseline: Optional[Mapping[str, float]] = None) -> bool:
    """fast_p's test for one row: accepted, and for p > 0 a speedup strictly above p."""
    if not v.get("accepted"):
        return False
    if p == 0:
        return True
    s = speedup_of(v, baseline)
    return s is not None and s > p


def rebaseline(verdicts: Iterable[Mapping[str, Any]], baseline_ms: Mapping[str, float]) -> list[Row]:
    """Copies of the rows with "speedup" = baseline_ms[problem_id] / sol_ms (None without either) and the
    eager speedup kept as "speedup_eager". Use it to score against e.g. torch.compile times; the baseline
    must have been measured at the same preset and precision as the solutions."""
    out = []
    for v in verdicts:
        row = dict(v)
        row["speedup_eager"] = v.get("speedup")
        row["speedup"] = speedup_of(v, baseline_ms)
        out.append(row)
    return out


# --- the paper's fast_p, one row per solution ----------------------------------------------------------


def fast_p(verdicts: Iterable[dict[str, Any]], p: float) -> float:
    """Share of solutions that are accepted (correct, no blocking flag) AND faster than the reference by > p.

    fast_0 is the accepted share whether or not the solutions were timed (as in the paper: correctness).
    Unjudgeable rows are not in the denominator; 0.0 when no row is left.
    """
    rows = judgeable(verdicts)
    if not rows:
        return 0.0
    hits = sum(1 for v in rows if v.get("accepted") and (p == 0 or (v.get("speedup") or 0.0) > p))
    return hits / len(rows)


def fast_p_table(verdicts: Iterable[dict[str, Any]],
                 thresholds: Iterable[float] = FAST_P_THRESHOLDS) -> dict[str, float]:
    rows = list(verdicts)
    return {f"fast_{p:g}": fast_p(rows, p) for p in thresholds}


def verdict_counts(verdicts: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.get("verdict", "?")] = counts.get(v.get("verdict", "?"), 0) + 1
    return counts
