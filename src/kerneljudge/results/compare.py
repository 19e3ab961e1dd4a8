"""`kerneljudge compare RUN_A RUN_B`: paired differences between two runs over the problems both have.

For each shared problem, each run's per-problem fast_p (its share of trajectories that qualify, as
trajectory_scores.fast_p_avg averages) and its mean log best speedup (as trajectory_scores.geomean_speedup
takes them); the difference B - A is averaged over problems and given a percentile bootstrap interval that resamples
problems, keeping each problem's pair together. The pieces are trajectory_scores.py's and
bootstrap_intervals.py's own functions.

Unjudgeable rows (the problem's reference could not judge) are left out of both runs before pairing, as
score does; a problem in both runs with no judgeable row in one of them is not shared, and the result
says how many rows and problems were left out (left_out_lines).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Mapping, Optional, Sequence

from kerneljudge.results import bootstrap_intervals, trajectory_scores, verdict_rows

DEFAULT_P = (0.0, 0.5, 1.0, 1.5, 2.0)
SAME = ("device_name", "precision", "preset", "policy")


def _mean(xs: list[float]) -> Optional[float]:
    return trajectory_scores.mean(xs) if xs else None


def _with_ci(values: list[float], n_boot: int, seed: int, confidence: float) -> dict[str, Any]:
    return {"value": _mean(values), "ci": bootstrap_intervals.bootstrap(values, _mean, n_boot, seed, confidence)}


def _exp(entry: dict[str, Any]) -> dict[str, Any]:
    ci = entry.get("ci")
    return {"value": None if entry["value"] is None else math.exp(entry["value"]),
            "ci": [math.exp(ci[0]), math.exp(ci[1])] if ci else None}


def compare_block(ga: Mapping[str, list], gb: Mapping[str, list], shared: Sequence[str], thresholds: Sequence[float],
                  baseline: Optional[Mapping[str, float]], n_boot: int, seed: int, confidence: float) -> dict[str, Any]:
    """fast_p and geomean speedup of A, of B and of B - A over the shared problems, against one baseline."""
    fast = {}
    for p in thresholds:
        pa = trajectory_scores.per_problem_fast_p({pid: ga[pid] for pid in shared}, p, baseline, None)
        pb = trajectory_scores.per_problem_fast_p({pid: gb[pid] for pid in shared}, p, baseline, None)
        a, b = [pa[pid] for pid in shared], [pb[pid] for pid in shared]
        diff = [y - x for x, y in zip(a, b)]
        fast[f"fast_{p:g}"] = {"a": _with_ci(a, n_boot, seed, confidence), "b": _with_ci(b, n_boot, seed, confidence),
                               "diff": _with_ci(diff, n_boot, seed, confidence),
                               "b_better": sum(d > 0 for d in diff), "a_better": sum(d < 0 for d in diff)}
    la, lb = [], []
    for pid in shared:
        xa = trajectory_scores.best_logs(ga[pid], baseline, None)
        xb = trajectory_scores.best_logs(gb[pid], baseline, None)
        if xa and xb:
            la.append(trajectory_scores.mean(xa))
            lb.append(trajectory_scores.mean(xb))
    dl = [y - x for x, y in zip(la, lb)]
    geo = {"problems": len(dl), "a": _exp(_with_ci(la, n_boot, seed, confidence)),
           "b": _exp(_with_ci(lb, n_boot, seed, confidence)), "ratio": _exp(_with_ci(dl, n_boot, seed, confidence)),
           "b_faster": sum(d > 0 for d in dl), "a_faster": sum(d < 0 for d in dl)}
    return {"fast_p": fast, "geomean_speedup": geo}


def _differences(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]]) -> list[str]:
    warnings = []
    for field in SAME:
        va = sorted({str(r[field]) for r in rows_a if r.get(field)})
        vb = sorted({str(r[field]) for r in rows_b if r.get(field)})
        if va and vb and va != vb:
            warnings.append(f"{field} differs: A {', '.join(va)}; B {', '.join(vb)} (speedups are each against their "
                            "own reference, so they compare, but the conditions differ)")
    return warnings


def compare(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]], *,
            thresholds: Sequence[float] = DEFAULT_P, baselines: Optional[Mapping[str, Mapping[str, float]]] = None,
            n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
            labels: Sequence[str] = ("A", "B")) -> dict[str, Any]:
    """Paired comparison, JSON-able. Keys: a, b ({label, rows, problems, left_out: verdict_rows.left_out of the
    run}), problems ({shared, only_a, only_b, only_a_ids, only_b_ids, unjudgeable, unjudgeable_ids}: unjudgeable counts
    the problems in both runs left out because one run has no judgeable row for them), confidence, n_boot,
    seed, warnings, and baselines: {"eager": block, NAME: block}
    where a block is {fast_p: {fast_P: {a, b, diff: {value, ci}, b_better, a_better}}, geomean_speedup:
    {problems, a, b, ratio: {value, ci}, b_faster, a_faster}}. ratio is B's geomean speedup over A's on
    the problems both solved and timed."""
    ga = trajectory_scores.trajectories(verdict_rows.judgeable(rows_a))
    gb = trajectory_scores.trajectories(verdict_rows.judgeable(rows_b))
    ids_a, ids_b = {verdict_rows.problem_of(v) for v in rows_a}, {verdict_rows.problem_of(v) for v in rows_b}
    shared = sorted(set(ga) & set(gb))
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    unjudgeable = sorted((ids_a & ids_b) - set(shared))
    out: dict[str, Any] = {
        "a": {"label": labels[0], "rows": len(rows_a), "problems": len(ids_a),
              "left_out": verdict_rows.left_out(rows_a)},
        "b": {"label": labels[1], "rows": len(rows_b), "problems": len(ids_b),
              "left_out": verdict_rows.left_out(rows_b)},
        "problems": {"shared": len(shared), "only_a": len(only_a), "only_b": len(only_b),
                     "only_a_ids": only_a[:20], "only_b_ids": only_b[:20],
                     "unjudgeable": len(unjudgeable), "unjudgeable_ids": unjudgeable[:20]},
        "confidence": confidence, "n_boot": n_boot, "seed": seed, "warnings": _differences(rows_a, rows_b),
        "baselines": {},
    }
    for name, table in {"eager": None, **dict(baselines or {})}.items():
        out["baselines"][name] = compare_block(ga, gb, shared, thresholds, table, n_boot, seed, confidence)
    return out


# --------------------------------------------------------------------------------------------- text


def _v(x: Optional[float], signed: bool = False) -> str:
    return "-" if x is None else (f"{x:+.2f}" if signed else f"{x:.2f}")


def ci_str(entry: Mapping[str, Any], signed: bool = False, suffix: str = "") -> str:
    ci = entry.get("ci")
    text = _v(entry.get("value"), signed) + suffix
    return text + (f" [{_v(ci[0], signed)}, {_v(ci[1], signed)}]" if ci else "")


def left_out_lines(c: Mapping[str, Any]) -> list[str]:
    """What the comparison left out: each run's unjudgeable rows, and the problems of both runs not paired."""
    lines = []
    for side in ("a", "b"):
        left = c[side].get("left_out") or {}
        if left.get("rows"):
            lines.append(f"{c[side]['label']}: {verdict_rows.left_out_line(left)}")
    n = (c.get("problems") or {}).get("unjudgeable", 0)
    if n:
        lines.append(f"{n} problem(s) in both runs not compared: a run has no judgeable verdict for them")
    return lines


def compare_text(c: Mapping[str, Any]) -> str:
    a, b, probs = c["a"], c["b"], c["problems"]
    lines = [f"A: {a['label']} ({a['rows']} verdicts, {a['problems']} problems)",
             f"B: {b['label']} ({b['rows']} verdicts, {b['problems']} problems)",
             f"shared problems: {probs['shared']} (only in A: {probs['only_a']}, only in B: {probs['only_b']}); "
             f"intervals: {100 * c['confidence']:g}% bootstrap over the shared problems, pairs kept together, "
             f"{c['n_boot']} resamples, seed {c['seed']}"]
    lines += [f"warning: {w}" for w in c.get("warnings", [])]
    lines += left_out_lines(c)
    for name, block in c["baselines"].items():
        table = [[f"against {name}", "A", "B", "B - A", "B better / A better"]]
        for k, e in block["fast_p"].items():
            table.append([k, ci_str(e["a"]), ci_str(e["b"]), ci_str(e["diff"], signed=True),
                          f"{e['b_better']} / {e['a_better']}"])
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        lines.append("")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table]
        g = block["geomean_speedup"]
        lines.append(f"geomean speedup over the {g['problems']} problem(s) both runs solved and timed: "
                     f"A {ci_str(g['a'], suffix='x')}, B {ci_str(g['b'], suffix='x')}, "
                     f"B/A {ci_str(g['ratio'], suffix='x')} "
                     f"(B faster on {g['b_faster']}, A on {g['a_faster']})")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- CLI


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def register(subparsers: Any) -> None:
    from kerneljudge.results.baselines import BASELINE_HELP

    p = subparsers.add_parser(
        "compare", help="paired differences between two runs (fast_p, geomean speedup, bootstrap intervals)",
        description="Compares run B with run A over the problems both contain: each problem's fast_p (share of "
                    "its trajectories that qualify) and its best accepted speedup, paired per problem, with "
                    "percentile bootstrap intervals that resample problems. Runs are bench run folders or JSONL "
                    "verdict logs.")
    p.add_argument("run_a", metavar="RUN_A")
    p.add_argument("run_b", metavar="RUN_B")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--baseline", action="append", default=[], metavar="[NAME=]FILE|compile|eager", help=BASELINE_HELP)
    p.add_argument("--p", type=_floats, default=list(DEFAULT_P), metavar="P,...",
                   help="fast_p thresholds (default 0,0.5,1,1.5,2)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000; 0 for none)")
    p.add_argument("--labels", type=lambda t: [x.strip() for x in t.split(",")], default=None, metavar="A,B",
                   help="names for the two runs (default: folder or file names)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from kerneljudge.results.baselines import load_baselines
    from kerneljudge.results.runs import RunError, load_runs

    if args.n_boot < 0 or any(p < 0 for p in args.p) or not args.p:
        print("kerneljudge: --n-boot and --p values must not be negative", file=sys.stderr)
        return 2
    try:
        run_a, run_b = load_runs([args.run_a, args.run_b], args.labels)
        baselines = load_baselines(args.baseline, run_a.rows + run_b.rows)
    except (RunError, ValueError) as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return 3
    result = compare(run_a.rows, run_b.rows, thresholds=args.p, baselines=baselines, n_boot=args.n_boot,
                     labels=(run_a.label, run_b.label))
    if not result["problems"]["shared"]:
        unjudgeable = result["problems"]["unjudgeable"]
        print(f"kerneljudge: {run_a.label} and {run_b.label} share no problem"
              + (f" with judgeable verdicts in both ({unjudgeable} left out as unjudgeable)" if unjudgeable else ""),
              file=sys.stderr)
        return 3
    print(json.dumps(result, sort_keys=True) if args.json else compare_text(result))
    return 0


__all__ = ["compare", "ci_str", "compare_block", "compare_text", "left_out_lines", "register", "cmd_compare"]
