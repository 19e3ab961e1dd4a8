"""A run's score as `kerneljudge score` reports it: summary(), every score of verdict_rows.py,
trajectory_scores.py and bootstrap_intervals.py at once as one JSON-able dict, and summary_table(), its
text rendering.

Unjudgeable rows (the problem's reference could not judge) are counted in the summary's rows, problems
and verdicts, and left out of every score in it; its "left_out" says how many and why.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from kerneljudge.results.bootstrap_intervals import bootstrap
from kerneljudge.results.noise_floor import floor_line
from kerneljudge.results.speedup_interval import RULE_FROM_P, interval_counts, qualifies_by_interval
from kerneljudge.results.trajectory_scores import (
    best_logs, fast_p_at_k, fast_p_by_turn, mean, pass_at_k_estimate, per_problem_fast_p, trajectories,
    trajectory_qualifies, turn_of,
)
from kerneljudge.results.verdict_rows import (
    judgeable, left_out, left_out_line, level_of, problem_of, qualifies, verdict_counts,
)

FAST_P_SET = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)     # the thresholds summary() reports by default


# --- summary() ------------------------------------------------------------------------------------------


def _key(p: float) -> str:
    return f"fast_{p:g}"


def _with_ci(values: Sequence[Any], statistic: Callable[[list[Any]], Optional[float]], n_boot: int, seed: int,
             confidence: float) -> dict[str, Any]:
    return {"value": statistic(list(values)), "ci": bootstrap(values, statistic, n_boot, seed, confidence)}


def _geo(logs_lists: list[list[float]]) -> Optional[float]:
    logs = [x for logs in logs_lists for x in logs]
    return math.exp(mean(logs)) if logs else None


def _fast_p(groups: dict[str, list], thresholds: Sequence[float], baseline, rule, n_boot: int, seed: int,
            confidence: float) -> dict[str, Any]:
    pids = sorted(groups)
    fast = {}
    for p in thresholds:
        per = per_problem_fast_p(groups, p, baseline, None, rule)
        fast[_key(p)] = _with_ci([per[pid] for pid in pids], lambda xs: mean(xs) if xs else None,
                                 n_boot, seed, confidence)
    return fast


def _core(groups: dict[str, list], thresholds: Sequence[float], baseline, n_boot: int, seed: int,
          confidence: float, interval_rule: bool) -> dict[str, Any]:
    pids = sorted(groups)
    logs = [best_logs(groups[pid], baseline, None) for pid in pids]
    geo = _with_ci(logs, _geo, n_boot, seed, confidence)
    geo["n"] = sum(len(x) for x in logs)
    block = {"problems": len(pids), "fast_p": _fast_p(groups, thresholds, baseline, qualifies, n_boot, seed,
                                                      confidence), "geomean_speedup": geo}
    if interval_rule:
        block["fast_p_interval_rule"] = _fast_p(groups, thresholds, baseline, qualifies_by_interval, n_boot, seed,
                                                confidence)
        rows = [v for pid in pids for t in groups[pid] for v in t]
        block["interval_rule"] = interval_counts(rows, baseline)
    return block


def summary(verdicts: Iterable[Mapping[str, Any]], *, baselines: Optional[Mapping[str, Mapping[str, float]]] = None,
            thresholds: Sequence[float] = FAST_P_SET, ks: Sequence[int] = (1, 5, 10), n_boot: int = 1000,
            seed: int = 0, confidence: float = 0.95, interval_rule: bool = True) -> dict[str, Any]:
    """Everything at once, JSON-able. Keys:

    rows, problems (every row and problem read, unjudgeable ones included), verdicts (counts), left_out
    (verdict_rows.left_out(): the unjudgeable rows, and the problems with no other row, that no score below counts),
    samples {min, max} (judgeable trajectories per problem), turns (number of turns seen), confidence,
    n_boot, seed, and "baselines": {"eager": ..., NAME: ...} (eager from the rows' own speedups, NAME from
    `baselines`: problem_id -> baseline ms), each with
      fast_p            {fast_0: {value, ci}, ...}   fast_p_avg over all turns, ci by bootstrap over problems
      fast_p_interval_rule  the same under the interval rule (speedup_interval.py: at p >= 1 a speedup whose
                        95% interval includes 1.0 is not counted faster); with interval_rule only
      interval_rule     {faster, clear, includes_1, unknown}: accepted rows above 1x, and how many of them the
                        rule keeps as faster, drops for an interval that includes 1.0, or for none known
      geomean_speedup   {value, ci, n}               over accepted, timed trajectories (best per trajectory)
      by_level          {level: {problems, fast_p, [fast_p_interval_rule, interval_rule,] geomean_speedup}}
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
    turns = (max(turn_of(v) for v in rows) + 1) if rows else 0
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
        block = _core(groups, thresholds, baseline, n_boot, seed, confidence, interval_rule)
        block["by_level"] = {str(lvl): _core(levels[lvl], thresholds, baseline, n_boot, seed, confidence,
                                             interval_rule)
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
                per = [pass_at_k_estimate(len(groups[pid]),
                                          sum(trajectory_qualifies(t, 0.0, None, None) for t in groups[pid]), k)
                       for pid in sorted(groups)]
                pass_k[str(k)] = _with_ci(per, lambda xs: mean(xs) if xs else None, n_boot, seed, confidence)
            block["pass_at_k"] = pass_k
        out["baselines"][name] = block
    return out


# --- summary_table() ------------------------------------------------------------------------------------


def _fmt(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cell(entry: Mapping[str, Any], digits: int = 2) -> str:
    ci = entry.get("ci")
    value = _fmt(entry.get("value"), digits)
    return value if not ci else f"{value} [{_fmt(ci[0], digits)}, {_fmt(ci[1], digits)}]"


def interval_rule_line(counts: Mapping[str, int]) -> str:
    """What the interval rule did to the rows fast_p would count faster than 1x."""
    return (f"interval rule (fast_p at p >= {RULE_FROM_P:g} counts a speedup only if its 95% interval is above 1): "
            f"{counts.get('faster', 0)} accepted row(s) above 1x, {counts.get('clear', 0)} clear of 1, "
            f"{counts.get('includes_1', 0)} with an interval that includes 1, {counts.get('unknown', 0)} with "
            "no interval (not counted faster)")


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
            if "fast_p_interval_rule" in b:
                table.append([f"{label}, interval rule", ""] + [_cell(b["fast_p_interval_rule"][k]) for k in keys]
                             + [""])
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        lines.append("")
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
        if block.get("interval_rule"):
            lines.append(interval_rule_line(block["interval_rule"]))
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
    if s.get("noise_floor"):   # score --floor
        lines += ["", floor_line(s["noise_floor"])]
    return "\n".join(lines)
