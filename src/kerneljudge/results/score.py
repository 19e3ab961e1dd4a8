"""Scores over verdicts: pure functions over plain dicts (as stored in the JSONL run log).

fast_p / fast_p_table / verdict_counts count every row once. The functions after them score generation
runs (several samples per problem, refinement turns, other baselines, levels, bootstrap intervals);
their row fields are described above FAST_P_SET.

Rows with verdict `unjudgeable` (the problem's reference could not judge: types.PROBLEM_OUTCOMES) are
neither correct nor wrong: every score leaves them out of its denominator, and a problem with no other
row out of per-problem averages. verdict_counts counts them like any verdict; left_out() says how many
rows and problems a score left out, and why.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

FAST_P_THRESHOLDS = (0.0, 0.5, 1.0, 1.5, 2.0)
UNJUDGEABLE = "unjudgeable"


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


# ---------------------------------------------------------------------------------------------------
# Scores for generation runs: samples, refinement turns, baselines, levels, confidence intervals.
#
# Verdict dict fields read here (everything else is ignored):
#   problem_id   the problem (falls back to "problem"); problems are the unit of every average
#   accepted     counts as correct (correct and no blocking flag)
#   speedup      eager reference time / solution time (None when not timed)
#   sol_ms       the solution's median time, used to re-base speedups on another baseline
#   sample       0-based index of an independent sample for the problem (default: see below)
#   turn         0-based refinement turn: 0 is the first attempt, t the attempt after t rounds of feedback
#                (default 0)
#   level        the problem's level (default: N from a problem_id "levelN/...", else 0)
# A row without "sample" belongs to sample 0 when it has a "turn"; rows with neither are separate samples
# in the order they appear (a plain `kerneljudge run` log with several solutions per problem), after the
# numbered samples. One (problem, sample) pair is a trajectory: it qualifies at turn t when any of its rows
# with turn <= t qualifies ("best so far"); max_turn=None means all its turns.
# ---------------------------------------------------------------------------------------------------

FAST_P_SET = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
_LEVEL_ID = re.compile(r"^level_?(\d+)/", re.IGNORECASE)

Row = dict[str, Any]


def problem_of(v: Mapping[str, Any]) -> str:
    return str(v.get("problem_id") or v.get("problem") or "?")


def level_of(v: Mapping[str, Any]) -> int:
    level = v.get("level")
    if isinstance(level, int) and not isinstance(level, bool):
        return level
    m = _LEVEL_ID.match(problem_of(v))
    return int(m.group(1)) if m else 0


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
    return {pid: [sorted(rows, key=_turn) for _, rows in sorted(samples.items())]
            for pid, samples in grouped.items()}


def _turn(v: Mapping[str, Any]) -> int:
    t = v.get("turn", 0)
    return t if isinstance(t, int) and not isinstance(t, bool) else 0


def _traj_ok(rows: Sequence[Mapping[str, Any]], p: float, baseline: Optional[Mapping[str, float]],
             max_turn: Optional[int]) -> bool:
    return any(qualifies(v, p, baseline) for v in rows if max_turn is None or _turn(v) <= max_turn)


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    return sum(values) / len(values) if values else 0.0


def per_problem_fast_p(groups: Mapping[str, list], p: float, baseline, max_turn) -> dict[str, float]:
    """problem -> the share of its trajectories that end correct and faster than p (x baseline)."""
    return {pid: mean([1.0 if _traj_ok(t, p, baseline, max_turn) else 0.0 for t in trajs])
            for pid, trajs in groups.items()}


def fast_p_avg(verdicts: Iterable[Mapping[str, Any]], p: float, *, baseline: Optional[Mapping[str, float]] = None,
               max_turn: Optional[int] = None) -> float:
    """fast_p averaged over problems: per problem, the share of its trajectories that qualify (by
    max_turn; None: any turn), then the mean over problems. With one row per problem this equals
    fast_p(). 0.0 for no rows."""
    per = per_problem_fast_p(trajectories(judgeable(verdicts)), p, baseline, max_turn)
    return mean(list(per.values()))


def fast_p_at_k(verdicts: Iterable[Mapping[str, Any]], p: float, k: int, *,
                baseline: Optional[Mapping[str, float]] = None, max_turn: Optional[int] = None) -> float:
    """Share of problems for which any of the first k samples (in sample order) qualifies. A problem with
    fewer than k samples uses the ones it has."""
    if k < 1:
        raise ValueError("k must be at least 1")
    groups = trajectories(judgeable(verdicts))
    return mean([1.0 if any(_traj_ok(t, p, baseline, max_turn) for t in trajs[:k]) else 0.0
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
    return mean([pass_at_k_estimate(len(trajs), sum(_traj_ok(t, p, baseline, max_turn) for t in trajs), k)
                  for trajs in groups.values()])


def fast_p_by_turn(verdicts: Iterable[Mapping[str, Any]], p: float, *,
                   baseline: Optional[Mapping[str, float]] = None) -> dict[int, float]:
    """turn t -> fast_p_avg with max_turn=t (best so far by turn t), for t = 0 .. the last turn seen.
    A trajectory that stopped early keeps its best result for the later turns."""
    rows = judgeable(verdicts)
    if not rows:
        return {}
    groups = trajectories(rows)
    last = max(_turn(v) for v in rows)
    return {t: mean(list(per_problem_fast_p(groups, p, baseline, t).values())) for t in range(last + 1)}


def best_logs(trajs: Sequence[Sequence[Mapping[str, Any]]], baseline, max_turn) -> list[float]:
    """log speedup of the best accepted, timed turn of each trajectory (trajectories with none are left out)."""
    logs = []
    for rows in trajs:
        best = None
        for v in rows:
            if max_turn is not None and _turn(v) > max_turn or not v.get("accepted"):
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


# --- bootstrap over problems ---------------------------------------------------------------------------


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


# --- summary -------------------------------------------------------------------------------------------


def _key(p: float) -> str:
    return f"fast_{p:g}"


def _with_ci(values: Sequence[Any], statistic: Callable[[list[Any]], Optional[float]], n_boot: int, seed: int,
             confidence: float) -> dict[str, Any]:
    return {"value": statistic(list(values)), "ci": bootstrap(values, statistic, n_boot, seed, confidence)}


def _geo(logs_lists: list[list[float]]) -> Optional[float]:
    logs = [x for logs in logs_lists for x in logs]
    return math.exp(mean(logs)) if logs else None


def _core(groups: dict[str, list], thresholds: Sequence[float], baseline, n_boot: int, seed: int,
          confidence: float) -> dict[str, Any]:
    pids = sorted(groups)
    fast = {}
    for p in thresholds:
        per = per_problem_fast_p({pid: groups[pid] for pid in pids}, p, baseline, None)
        fast[_key(p)] = _with_ci([per[pid] for pid in pids], lambda xs: mean(xs) if xs else None,
                                 n_boot, seed, confidence)
    logs = [best_logs(groups[pid], baseline, None) for pid in pids]
    geo = _with_ci(logs, _geo, n_boot, seed, confidence)
    geo["n"] = sum(len(x) for x in logs)
    return {"problems": len(pids), "fast_p": fast, "geomean_speedup": geo}


def summary(verdicts: Iterable[Mapping[str, Any]], *, baselines: Optional[Mapping[str, Mapping[str, float]]] = None,
            thresholds: Sequence[float] = FAST_P_SET, ks: Sequence[int] = (1, 5, 10), n_boot: int = 1000,
            seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """Everything at once, JSON-able. Keys:

    rows, problems (every row and problem read, unjudgeable ones included), verdicts (counts), left_out
    (left_out(): the unjudgeable rows, and the problems with no other row, that no score below counts),
    samples {min, max} (judgeable trajectories per problem), turns (number of turns seen), confidence,
    n_boot, seed, and "baselines": {"eager": ..., NAME: ...} (eager from the rows' own speedups, NAME from
    `baselines`: problem_id -> baseline ms), each with
      fast_p            {fast_0: {value, ci}, ...}   fast_p_avg over all turns, ci by bootstrap over problems
      geomean_speedup   {value, ci, n}               over accepted, timed trajectories (best per trajectory)
      by_level          {level: {problems, fast_p, geomean_speedup}}
      fast_p_by_turn    {fast_p: {turn: value}}      only when there is more than one turn
      fast_p_at_k       {k: {fast_p: value}}         first-k samples, for k in ks up to the most samples
      pass_at_k         {k: {value, ci}}             unbiased, p = 0, for k in ks up to the fewest samples
    A block's own "problems" counts the problems it scored (those with a judgeable row).
    Level and bootstrap keys are strings (JSON); values are None where undefined.
    """
    every = list(verdicts)
    rows = judgeable(every)
    groups = trajectories(rows)
    sample_counts = [len(t) for t in groups.values()]
    turns = (max(_turn(v) for v in rows) + 1) if rows else 0
    out: dict[str, Any] = {
        "rows": len(every), "problems": len({problem_of(v) for v in every}),
        "samples": {"min": min(sample_counts, default=0), "max": max(sample_counts, default=0)},
        "turns": turns, "verdicts": verdict_counts(every), "left_out": left_out(every),
        "confidence": confidence, "n_boot": n_boot, "seed": seed, "baselines": {},
    }
    named: dict[str, Optional[Mapping[str, float]]] = {"eager": None, **dict(baselines or {})}
    levels: dict[int, dict[str, list]] = {}
    for pid, trajs in groups.items():
        levels.setdefault(level_of(trajs[0][0]), {})[pid] = trajs
    for name, baseline in named.items():
        block = _core(groups, thresholds, baseline, n_boot, seed, confidence)
        block["by_level"] = {str(lvl): _core(levels[lvl], thresholds, baseline, n_boot, seed, confidence)
                             for lvl in sorted(levels)}
        if turns > 1:
            block["fast_p_by_turn"] = {_key(p): {str(t): v
                                                 for t, v in fast_p_by_turn(rows, p, baseline=baseline).items()}
                                       for p in thresholds}
        block["fast_p_at_k"] = {str(k): {_key(p): fast_p_at_k(rows, p, k, baseline=baseline) for p in thresholds}
                                for k in ks if 1 <= k <= out["samples"]["max"]}
        if name == "eager":
            pass_k = {}
            for k in ks:
                if not 1 <= k <= out["samples"]["min"]:
                    continue
                per = [pass_at_k_estimate(len(groups[pid]), sum(_traj_ok(t, 0.0, None, None) for t in groups[pid]), k)
                       for pid in sorted(groups)]
                pass_k[str(k)] = _with_ci(per, lambda xs: mean(xs) if xs else None, n_boot, seed, confidence)
            block["pass_at_k"] = pass_k
        out["baselines"][name] = block
    return out


def _fmt(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cell(entry: Mapping[str, Any], digits: int = 2) -> str:
    ci = entry.get("ci")
    value = _fmt(entry.get("value"), digits)
    return value if not ci else f"{value} [{_fmt(ci[0], digits)}, {_fmt(ci[1], digits)}]"


def summary_table(s: Mapping[str, Any]) -> str:
    """A readable rendering of summary()."""
    tally = ", ".join(f"{n} {k}" for k, n in sorted(s.get("verdicts", {}).items()))
    samples = s.get("samples", {})
    spp = (f"{samples.get('min')}" if samples.get("min") == samples.get("max")
           else f"{samples.get('min')}-{samples.get('max')}")
    lines = [f"{s.get('rows', 0)} verdicts over {s.get('problems', 0)} problems, {spp} sample(s) per problem, "
             f"{s.get('turns', 0)} turn(s)" + (f" ({tally})" if tally else ""),
             f"intervals: {100 * s.get('confidence', 0.95):g}% bootstrap over problems, {s.get('n_boot')} resamples, "
             f"seed {s.get('seed')}"]
    for name, block in s.get("baselines", {}).items():
        keys = list(block.get("fast_p", {}))
        header = ["against " + name, "n"] + keys + ["geomean speedup"]
        table = [header]
        scopes = [("all", block)] + [(f"level {lvl}", b) for lvl, b in block.get("by_level", {}).items()]
        for label, b in scopes:
            table.append([label, str(b.get("problems", 0))] + [_cell(b["fast_p"][k]) for k in keys]
                         + [_cell(b["geomean_speedup"]) + f" (n={b['geomean_speedup'].get('n', 0)})"])
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        lines.append("")
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
        if block.get("fast_p_by_turn"):
            lines.append("best so far by turn:")
            for key, per_turn in block["fast_p_by_turn"].items():
                lines.append(f"  {key}: " + "  ".join(f"t{t}={_fmt(v)}" for t, v in per_turn.items()))
        if block.get("fast_p_at_k") and len(block["fast_p_at_k"]) > 1:
            lines.append("first k samples:")
            for k, table_k in block["fast_p_at_k"].items():
                lines.append(f"  k={k}: " + "  ".join(f"{p}={_fmt(v)}" for p, v in table_k.items()))
        if block.get("pass_at_k"):
            lines.append("pass@k (unbiased): " + "  ".join(f"pass@{k}={_cell(e)}"
                                                           for k, e in block["pass_at_k"].items()))
    left = left_out_line(s.get("left_out") or {})
    if left:
        lines += ["", left]
    return "\n".join(lines)
