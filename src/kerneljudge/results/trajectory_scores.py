"""Scores of generation runs, averaged over problems: several samples per problem, refinement turns,
other baselines, levels (fast_p_avg, fast_p@k, pass@k, best so far by turn, geometric-mean speedup).

Pure functions over plain dicts (as stored in the JSONL run log). Besides the fields verdict_rows.py
reads, these read:
  sample       0-based index of an independent sample for the problem (default: see below)
  turn         0-based refinement turn: 0 is the first attempt, t the attempt after t rounds of feedback
               (default 0)
A row without "sample" belongs to sample 0 when it has a "turn"; rows with neither are separate samples
in the order they appear (a plain `kerneljudge run` log with several solutions per problem), after the
numbered samples. One (problem, sample) pair is a trajectory: it qualifies at turn t when any of its rows
with turn <= t qualifies ("best so far"); max_turn=None means all its turns.

Unjudgeable rows are left out before scoring (verdict_rows.judgeable), and so is a problem with no other row.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from kerneljudge.results.verdict_rows import judgeable, level_of, problem_of, qualifies, speedup_of


def trajectories(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, list[list[Mapping[str, Any]]]]:
    """problem_id -> its trajectories (numbered samples in order, then unnumbered ones), each a list of
    rows sorted by turn."""
    grouped: dict[str, dict[tuple[int, int], list[Mapping[str, Any]]]] = {}
    auto: dict[str, int] = {}
    for v in verdicts:
        pid = problem_of(v)
        sample = v.get("sample")
        if isinstance(sample, int) and not isinstance(sample, bool):
            key = (0, sample)
        elif "turn" in v:
            key = (0, 0)
        else:
            key = (1, auto.get(pid, 0))
            auto[pid] = key[1] + 1
        grouped.setdefault(pid, {}).setdefault(key, []).append(v)
    return {pid: [sorted(rows, key=turn_of) for _, rows in sorted(samples.items())]
            for pid, samples in grouped.items()}


def turn_of(v: Mapping[str, Any]) -> int:
    """The row's refinement turn (0 when it has none, or not an int)."""
    t = v.get("turn", 0)
    return t if isinstance(t, int) and not isinstance(t, bool) else 0


# a row's test for fast_p: verdict_rows.qualifies, or speedup_interval.qualifies_by_interval
Rule = Callable[[Mapping[str, Any], float, Optional[Mapping[str, float]]], bool]


def trajectory_qualifies(rows: Sequence[Mapping[str, Any]], p: float, baseline: Optional[Mapping[str, float]],
                         max_turn: Optional[int], rule: Rule = qualifies) -> bool:
    """Whether any row of the trajectory up to max_turn (None: any turn) qualifies for fast_p by `rule`."""
    return any(rule(v, p, baseline) for v in rows if max_turn is None or turn_of(v) <= max_turn)


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    return sum(values) / len(values) if values else 0.0


def per_problem_fast_p(groups: Mapping[str, list], p: float, baseline, max_turn,
                       rule: Rule = qualifies) -> dict[str, float]:
    """problem -> the share of its trajectories that end correct and faster than p (x baseline) by `rule`."""
    return {pid: mean([1.0 if trajectory_qualifies(t, p, baseline, max_turn, rule) else 0.0 for t in trajs])
            for pid, trajs in groups.items()}


def fast_p_avg(verdicts: Iterable[Mapping[str, Any]], p: float, *, baseline: Optional[Mapping[str, float]] = None,
               max_turn: Optional[int] = None) -> float:
    """fast_p averaged over problems: per problem, the share of its trajectories that qualify (by
    max_turn; None: any turn), then the mean over problems. With one row per problem this equals
    verdict_rows.fast_p(). 0.0 for no rows."""
    per = per_problem_fast_p(trajectories(judgeable(verdicts)), p, baseline, max_turn)
    return mean(list(per.values()))


def fast_p_at_k(verdicts: Iterable[Mapping[str, Any]], p: float, k: int, *,
                baseline: Optional[Mapping[str, float]] = None, max_turn: Optional[int] = None) -> float:
    """Share of problems for which any of the first k samples (in sample order) qualifies. A problem with
    fewer than k samples uses the ones it has."""
    if k < 1:
        raise ValueError("k must be at least 1")
    groups = trajectories(judgeable(verdicts))
    return mean([1.0 if any(trajectory_qualifies(t, p, baseline, max_turn) for t in trajs[:k]) else 0.0
                  for trajs in groups.values()])


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """The unbiased estimator 1 - C(n-c, k) / C(n, k) of the chance that k of n samples include a success."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n; got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n; got n={n}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k(verdicts: Iterable[Mapping[str, Any]], k: int, *, p: float = 0.0,
              baseline: Optional[Mapping[str, float]] = None, max_turn: Optional[int] = None) -> float:
    """Mean over problems of the unbiased pass@k estimate from each problem's n trajectories, c of which
    qualify for fast_p (p=0: accepted). Raises ValueError when a problem has fewer than k judgeable samples."""
    groups = trajectories(judgeable(verdicts))
    short = sorted(pid for pid, trajs in groups.items() if len(trajs) < k)
    if short:
        raise ValueError(f"pass@{k} needs at least {k} samples per problem; fewer for {', '.join(short[:5])}"
                         + (" ..." if len(short) > 5 else ""))
    return mean([pass_at_k_estimate(len(trajs), sum(trajectory_qualifies(t, p, baseline, max_turn) for t in trajs),
                                    k)
                 for trajs in groups.values()])


def fast_p_by_turn(verdicts: Iterable[Mapping[str, Any]], p: float, *,
                   baseline: Optional[Mapping[str, float]] = None) -> dict[int, float]:
    """turn t -> fast_p_avg with max_turn=t (best so far by turn t), for t = 0 .. the last turn seen.
    A trajectory that stopped early keeps its best result for the later turns."""
    rows = judgeable(verdicts)
    if not rows:
        return {}
    groups = trajectories(rows)
    last = max(turn_of(v) for v in rows)
    return {t: mean(list(per_problem_fast_p(groups, p, baseline, t).values())) for t in range(last + 1)}


def best_logs(trajs: Sequence[Sequence[Mapping[str, Any]]], baseline, max_turn) -> list[float]:
    """log speedup of the best accepted, timed turn of each trajectory (trajectories with none are left out)."""
    logs = []
    for rows in trajs:
        best = None
        for v in rows:
            if max_turn is not None and turn_of(v) > max_turn or not v.get("accepted"):
                continue
            s = speedup_of(v, baseline)
            if s is not None and s > 0 and math.isfinite(s):
                best = s if best is None else max(best, s)
        if best is not None:
            logs.append(math.log(best))
    return logs


def geomean_speedup(verdicts: Iterable[Mapping[str, Any]], *, baseline: Optional[Mapping[str, float]] = None,
                    max_turn: Optional[int] = None) -> Optional[float]:
    """Geometric mean speedup over correct (accepted, timed) solutions: one value per trajectory, its best
    accepted speedup by max_turn. None when there is none."""
    groups = trajectories(judgeable(verdicts))
    logs = [x for trajs in groups.values() for x in best_logs(trajs, baseline, max_turn)]
    return math.exp(mean(logs)) if logs else None


def by_level(verdicts: Iterable[Mapping[str, Any]], fn: Callable[..., Any], *args: Any,
             **kwargs: Any) -> dict[int, Any]:
    """level -> fn(rows of that level, *args, **kwargs), levels in increasing order."""
    levels: dict[int, list[Mapping[str, Any]]] = {}
    for v in verdicts:
        levels.setdefault(level_of(v), []).append(v)
    return {lvl: fn(levels[lvl], *args, **kwargs) for lvl in sorted(levels)}
