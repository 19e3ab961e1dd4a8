"""The stability benchmark's numbers (issue 11 part 5), as pure functions over verdicts: no judging here.

A run is plain data: {"name": "quiet-1", "condition": "quiet" | "busy", "wall_s": float, "verdicts": [...]},
each verdict a dict as `kerneljudge run` logs it. `solution_rows(runs)` gives one row per solution,
`summarize(rows, runs)` checks the rows against the issue's bars, `render_markdown(...)` writes the report.
scripts/stability_bench.py runs the judge and calls these; tests/test_stability_bench.py feeds them
synthetic verdicts.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

# The bars (figures of the benchmark on the H200).
SPREAD_E2E_LONG = 0.01      # speedup spread, end-to-end clock, solutions of 1 ms and more
SPREAD_E2E_SHORT = 0.03     # the same for solutions of 0.05-1 ms
SPREAD_DEVICE = 0.01        # speedup spread with the device clock, every solution
PROFILER_AGREEMENT = 0.02   # device clock against the profiler's summed kernel time, single-kernel solutions
BUSY_CHANGE = 0.01          # median speedup on a busy host against a quiet one
THROUGHPUT_FLOOR = 0.90     # solutions per hour of a run against the first quiet run
LONG_MS, SHORT_MS = 1.0, 0.05


def spread(values: list[float]) -> float | None:
    """max/min - 1 over positive values; None with fewer than two."""
    xs = [float(x) for x in values if x is not None]
    if len(xs) < 2 or min(xs) <= 0:
        return None
    return max(xs) / min(xs) - 1.0


def median(values: list[float]) -> float | None:
    xs = [float(x) for x in values if x is not None]
    return statistics.median(xs) if xs else None


def relative_change(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None or old <= 0 else new / old - 1.0


def profile_total(verdict: dict[str, Any]) -> tuple[float | None, int | None, str | None]:
    """The profiled call's summed device time in ms, its number of device activities, and its clock.

    The `(total)` row of `Verdict.profile` sums every row of one profiled forward call (the solution's own
    kernels and any memset/copy it launches): the same work a CUDA-graph replay of that forward measures."""
    for row in verdict.get("profile") or []:
        if row.get("name") == "(total)" and isinstance(row.get("device_us"), (int, float)):
            return float(row["device_us"]) / 1e3, row.get("calls"), row.get("clock")
    return None, None, None


def _sample(verdict: dict[str, Any]) -> dict[str, Any]:
    """The numbers one run gives for one solution."""
    prof_ms, prof_calls, prof_clock = profile_total(verdict)
    dev_ms = verdict.get("sol_device_ms")
    return {
        "verdict": verdict.get("verdict"), "accepted": bool(verdict.get("accepted")),
        "flags": list(verdict.get("flags") or []),
        "speedup": verdict.get("speedup_end_to_end", verdict.get("speedup")),
        "speedup_device": verdict.get("speedup_device"),
        "sol_ms": verdict.get("sol_ms"), "ref_ms": verdict.get("ref_ms"),
        "sol_device_ms": dev_ms, "ref_device_ms": verdict.get("ref_device_ms"),
        "device_clock": verdict.get("device_clock"),
        "profile_ms": prof_ms, "profile_calls": prof_calls, "profile_clock": prof_clock,
        "device_over_profiler": dev_ms / prof_ms if dev_ms and prof_ms else None,
        "host_clock_samples": (verdict.get("sol_timing") or {}).get("host_clock_samples"),
    }


def _minus(a: Any, b: Any) -> float | None:
    return float(a) - float(b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


def solution_rows(runs: list[dict[str, Any]], meta: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per solution (keyed by its file name) over all runs, sorted by name.

    `meta` maps a solution file name to extra columns (kind, problem, baseline_ms)."""
    samples: dict[str, dict[str, dict[str, Any]]] = {}
    problems: dict[str, str] = {}
    for run in runs:
        for v in run["verdicts"]:
            name = Path(v["solution"]).name
            samples.setdefault(name, {})
            problems.setdefault(name, v.get("problem_id", ""))
            samples[name][run["name"]] = _sample(v)
    rows = []
    for name in sorted(samples):
        per_run = samples[name]
        missing = [r["name"] for r in runs if r["name"] not in per_run]
        bad = [n for n, s in per_run.items() if s["verdict"] != "correct" or not s["accepted"]]
        good = {n: s for n, s in per_run.items() if n not in bad}
        quiet = [good[r["name"]]["speedup"] for r in runs if r["condition"] == "quiet" and r["name"] in good]
        busy = [good[r["name"]]["speedup"] for r in runs if r["condition"] == "busy" and r["name"] in good]
        quiet_dev = [good[r["name"]]["speedup_device"] for r in runs if r["condition"] == "quiet" and r["name"] in good]
        busy_dev = [good[r["name"]]["speedup_device"] for r in runs if r["condition"] == "busy" and r["name"] in good]
        ratios = [s["device_over_profiler"] for s in good.values()]
        calls = {s["profile_calls"] for s in good.values()}
        rows.append({
            "solution": name, "problem": problems[name], **((meta or {}).get(name, {})),
            "complete": not missing and not bad, "missing_runs": missing,
            "not_accepted_runs": {n: f"{per_run[n]['verdict']} {' '.join(per_run[n]['flags'])}".strip() for n in bad},
            "runs": per_run,
            "sol_ms": median([s["sol_ms"] for s in good.values()]),
            "ref_ms": median([s["ref_ms"] for s in good.values()]),
            "sol_device_ms": median([s["sol_device_ms"] for s in good.values()]),
            "device_clock": sorted({str(s["device_clock"]) for s in good.values()}),
            "spread_e2e": spread([s["speedup"] for s in good.values()]),
            "spread_device": spread([s["speedup_device"] for s in good.values()]),
            "spread_sol_device_ms": spread([s["sol_device_ms"] for s in good.values()]),
            "busy_vs_quiet": relative_change(median(busy), median(quiet)),
            "busy_vs_quiet_device": relative_change(median(busy_dev), median(quiet_dev)),
            "device_over_profiler": median(ratios),
            "single_kernel": calls == {1},
            "sol_launch_ms": _range([_minus(s.get("sol_ms"), s.get("sol_device_ms")) for s in good.values()]),
            "ref_launch_ms": _range([_minus(s.get("ref_ms"), s.get("ref_device_ms")) for s in good.values()]),
        })
    return rows


def _range(xs: list[float | None]) -> list[float] | None:
    """[min, max] of the known values, or None."""
    known = [x for x in xs if x is not None]
    return [min(known), max(known)] if known else None


def time_class(sol_ms: float | None) -> str:
    """Which end-to-end bar a solution falls under, by its median end-to-end time."""
    if sol_ms is None:
        return "unknown"
    return "long" if sol_ms >= LONG_MS else "short" if sol_ms >= SHORT_MS else "tiny"


def _bar(label: str, limit: float, checked: list[tuple[str, float | None]], ok, worst_of) -> dict[str, Any]:
    measured = [(n, x) for n, x in checked if x is not None]
    failures = [n for n, x in measured if not ok(x)]
    status = "n/a" if not measured else "PASS" if not failures else "FAIL"
    return {"label": label, "limit": limit, "checked": len(measured), "passed": len(measured) - len(failures),
            "failures": failures, "status": status,
            "worst": worst_of([x for _, x in measured]) if measured else None,
            "unmeasured": [n for n, x in checked if x is None]}


def run_counts(run: dict[str, Any]) -> tuple[int, int]:
    """(solutions judged, correct) of a run: from its verdicts, or from the counts a report kept."""
    if "verdicts" in run:
        return len(run["verdicts"]), sum(v.get("verdict") == "correct" for v in run["verdicts"])
    return int(run["solutions"]), int(run["correct"])


def throughput(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Solutions per hour of each run, and against the first quiet run."""
    def rate(r: dict[str, Any]) -> float | None:
        return run_counts(r)[0] / r["wall_s"] * 3600 if r.get("wall_s") else None

    base = next((rate(r) for r in runs if r["condition"] == "quiet" and r.get("wall_s")), None)
    out = []
    for r in runs:
        n, correct = run_counts(r)
        per_hour = rate(r)
        out.append({"run": r["name"], "condition": r["condition"], "wall_s": r.get("wall_s"), "solutions": n,
                    "correct": correct, "per_hour": per_hour,
                    "vs_first_quiet": per_hour / base if per_hour and base else None})
    return out


def merge(reports: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows and runs of several reports of disjoint solution sets (shards) as one: rows side by side, each
    run's wall time and counts summed over the shards (one shard's runs follow another's, as in one batch)."""
    rows, runs, seen = [], {}, set()
    for report in reports:
        for row in report["solutions"]:
            if row["solution"] in seen:
                raise ValueError(f"{row['solution']} is in two of the reports: merge shards of one set only")
            seen.add(row["solution"])
            rows.append(row)
        for r in report["runs"]:
            n, correct = run_counts(r)
            into = runs.setdefault(r["name"], {"name": r["name"], "condition": r["condition"], "wall_s": 0.0,
                                               "solutions": 0, "correct": 0})
            if into["condition"] != r["condition"]:
                raise ValueError(f"run {r['name']} is {into['condition']} in one report and {r['condition']} "
                                 "in another")
            into["wall_s"] += r.get("wall_s") or 0.0
            into["solutions"] += n
            into["correct"] += correct
    return rows, list(runs.values())


def summarize(rows: list[dict[str, Any]], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Every bar of the issue, with what passed, what failed and the worst value."""
    complete = [r for r in rows if r["complete"]]
    worst_abs = lambda xs: max(xs, key=abs)  # noqa: E731
    long_rows = [r for r in complete if time_class(r["sol_ms"]) == "long"]
    short_rows = [r for r in complete if time_class(r["sol_ms"]) == "short"]
    single = [r for r in complete if r["single_kernel"]]
    rates = throughput(runs)
    has_busy = any(r["condition"] == "busy" for r in runs)
    bars = {
        "spread_e2e_long": _bar(f"speedup spread over the runs, end-to-end clock, solutions of >= {LONG_MS:g} ms",
                                SPREAD_E2E_LONG, [(r["solution"], r["spread_e2e"]) for r in long_rows],
                                lambda x: x <= SPREAD_E2E_LONG, max),
        "spread_e2e_short": _bar(f"speedup spread over the runs, end-to-end clock, solutions of "
                                 f"{SHORT_MS:g}-{LONG_MS:g} ms",
                                 SPREAD_E2E_SHORT, [(r["solution"], r["spread_e2e"]) for r in short_rows],
                                 lambda x: x <= SPREAD_E2E_SHORT, max),
        "spread_device": _bar("speedup spread over the runs, device clock, every solution", SPREAD_DEVICE,
                              [(r["solution"], r["spread_device"]) for r in complete],
                              lambda x: x <= SPREAD_DEVICE, max),
        "device_vs_profiler": _bar("device clock / profiler's summed kernel time - 1, single-kernel solutions",
                                   PROFILER_AGREEMENT,
                                   [(r["solution"], None if r["device_over_profiler"] is None
                                     else r["device_over_profiler"] - 1.0) for r in single],
                                   lambda x: abs(x) <= PROFILER_AGREEMENT, worst_abs),
        "busy_vs_quiet": _bar("median speedup, busy host against quiet host, end-to-end clock", BUSY_CHANGE,
                              [(r["solution"], r["busy_vs_quiet"]) for r in complete] if has_busy else [],
                              lambda x: abs(x) <= BUSY_CHANGE, worst_abs),
        # the bar compares batch throughput on a normal host; busy runs are in the runs table only
        # (their load takes the cores the builds run on)
        "throughput": _bar("solutions per hour of each quiet run against the first quiet run", THROUGHPUT_FLOOR,
                           [(t["run"], t["vs_first_quiet"]) for t in rates if t["condition"] == "quiet"],
                           lambda x: x >= THROUGHPUT_FLOOR, min),
    }
    return {"bars": bars, "solutions": len(rows), "complete": len(complete),
            "incomplete": {r["solution"]: {"missing_runs": r["missing_runs"], "not_accepted": r["not_accepted_runs"]}
                           for r in rows if not r["complete"]},
            "tiny": [r["solution"] for r in complete if time_class(r["sol_ms"]) == "tiny"],
            "throughput": rates}


# ------------------------------------------------------------------------------------------ rendering
def _pct(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:+.2f}%" if signed else f"{100 * x:.2f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _sig(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _bar_value(key: str, x: float | None) -> str:
    if key == "throughput":
        return "-" if x is None else f"{100 * x:.1f}%"
    return _pct(x, signed=key in ("device_vs_profiler", "busy_vs_quiet"))


def bars_table(summary: dict[str, Any]) -> str:
    lines = ["| bar | limit | result | passed | worst | failing |", "|---|---|---|---|---|---|"]
    for key, b in summary["bars"].items():
        limit = f">= {100 * b['limit']:.0f}%" if key == "throughput" else f"<= {100 * b['limit']:.0f}%"
        failing = ", ".join(b["failures"][:8]) + (" ..." if len(b["failures"]) > 8 else "")
        lines.append(f"| {b['label']} | {limit} | **{b['status']}** | {b['passed']}/{b['checked']} | "
                     f"{_bar_value(key, b['worst'])} | {failing} |")
    return "\n".join(lines) + "\n"


def runs_table(summary: dict[str, Any]) -> str:
    lines = ["| run | host | wall s | solutions | correct | solutions/h | vs first quiet run |",
             "|---|---|---|---|---|---|---|"]
    for t in summary["throughput"]:
        lines.append(f"| {t['run']} | {t['condition']} | {_num(t['wall_s'], 1)} | {t['solutions']} | {t['correct']} | "
                     f"{_num(t['per_hour'], 0)} | {_bar_value('throughput', t['vs_first_quiet'])} |")
    return "\n".join(lines) + "\n"


def solutions_table(rows: list[dict[str, Any]], runs: list[dict[str, Any]]) -> str:
    names = [r["name"] for r in runs]
    head = (["solution", "kind", "H200 eager ms (baseline)", "ref ms", "sol ms", "sol device ms"]
            + [f"{n} speedup" for n in names]
            + ["spread e2e", "spread device speedup", "spread sol device ms", "busy vs quiet",
               "device / profiler", "device clock", "sol e2e - device us", "ref e2e - device us"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(rows, key=lambda r: (r["sol_ms"] is None, r["sol_ms"] or 0.0, r["solution"])):  # shortest first
        cells = [r["solution"], r.get("kind", ""), _num(r.get("baseline_ms")), _num(r["ref_ms"]), _num(r["sol_ms"]),
                 _num(r["sol_device_ms"])]
        for n in names:
            s = r["runs"].get(n)
            cells.append("-" if s is None else _sig(s["speedup"]) if s["verdict"] == "correct" else s["verdict"])
        ratio = _num(r["device_over_profiler"], 4) + (" (1 kernel)" if r["single_kernel"] else "")
        cells += [_pct(r["spread_e2e"]), _pct(r["spread_device"]), _pct(r["spread_sol_device_ms"]),
                  _pct(r["busy_vs_quiet"], signed=True), ratio, "/".join(r["device_clock"]),
                  _us_range(r.get("sol_launch_ms")), _us_range(r.get("ref_launch_ms"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _us_range(span: list[float] | None) -> str:
    return "-" if not span else f"{1e3 * span[0]:.0f}-{1e3 * span[1]:.0f}"


def render_markdown(info: dict[str, Any], rows: list[dict[str, Any]], runs: list[dict[str, Any]],
                    summary: dict[str, Any]) -> str:
    title = info.get("title", "Stability benchmark")
    out = [f"# {title}", ""]
    out += [f"- {k}: {v}" for k, v in info.items() if k not in ("title", "notes", "command")]
    out += ["", "Command:", "", "```", info.get("command", ""), "```", ""]
    for note in info.get("notes", []):
        out += [note, ""]
    out += ["## Against the issue's bars", "", bars_table(summary)]
    if summary["incomplete"]:
        out += ["Not counted (a run missing, or a verdict other than correct and accepted): "
                + "; ".join(f"{n}: {d}" for n, d in summary["incomplete"].items()), ""]
    if summary["tiny"]:
        out += [f"Under {SHORT_MS:g} ms, no end-to-end bar: {', '.join(summary['tiny'])}", ""]
    out += ["## Runs", "", runs_table(summary), "## Per solution", "", solutions_table(rows, runs), METHOD]
    return "\n".join(out)


METHOD = """
How to read it:
- speedup columns: `speedup_end_to_end` (reference / solution, host launch included) of each run, in the
  order the runs were made (quiet and busy runs alternate, so drift over time is not mistaken for load).
- spread: max/min - 1 over every run in which the verdict was `correct` and accepted. `spread e2e` uses
  `speedup_end_to_end`, `spread device speedup` uses `speedup_device`, `spread sol device ms` uses the
  solution's own `sol_device_ms`.
- busy vs quiet: median end-to-end speedup of the busy runs / that of the quiet runs - 1.
- device / profiler: the judge's `sol_device_ms` divided by the profiler's summed device time of one
  profiled forward call (the `(total)` row of the verdict's `profile`: every kernel, memset and copy of
  that call, i.e. the same work a CUDA-graph replay of the forward measures), median over the runs.
  "(1 kernel)" marks solutions whose profiled call ran exactly one device activity: the bar applies to those.
- the end-to-end bar of a solution is chosen by its median end-to-end time (`sol ms`).
- e2e - device: `sol_ms - sol_device_ms` (and the same for the reference), lowest to highest over the runs,
  in microseconds: what the end-to-end clock adds to the device time, mostly the host's launch latency
  before the first kernel. Its movement between runs is what moves end-to-end speedups of short kernels.
- solutions/h: verdicts of the run / its wall time; each run is a fresh `kerneljudge run` (a new log) on a
  warm build cache (one warm-up run before, not counted). The throughput bar compares the quiet runs with
  the first one; the busy runs' figures show what the load costs (it runs on the cores the builds use).
"""
