"""The upstream sweep's report (scripts/upstream_sweep.py): pure functions over verdict dicts and samples.

Nothing here judges, samples or reads files. summarize() takes the verdicts of one sweep (dicts as in a
results.jsonl), the GPU and host samples taken while it ran and what is known about the run, and returns one
JSON-ready dict; sweep_report_markdown.render_markdown() writes that dict as the report. So a report can be
made again from a results.jsonl at any time (`upstream_sweep.py --from-jsonl FILE`) and tested on hand-made
verdicts. Its "floor" (kerneljudge.results.noise_floor.build_floor) is what the sweep writes as floor.json.

Samples, as the sweep records them (t: seconds since the judge was started):
    GPU:  {"t": 12.5, "gpu": 0, "util": 87.0, "mem_mib": 4021.0}
    host: {"t": 12.0, "load1": 3.2, "cpu_percent": 41.0 or None, "verdicts": 17 or None (lines in the log)}
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from kerneljudge.judging.evaluate import is_memory_failure
from kerneljudge.results.noise_floor import build_floor
from sweep_floor_report import NEAR_ONE, WIDE, device_clock_shares

FALSE_POSITIVE_AT = (1.05, 1.1)  # fast_p thresholds whose false-positive rate the sweep measures
IDLE_BAR_S = 10.0                # the bar: no stretch longer than this with the GPU idle while work waits
SHOWN = 10                       # offenders, slowest problems and problem-level outcomes listed by name
# clock -> (speedup field, reference time field, solution time field) of a verdict
CLOCK_FIELDS = {"end_to_end": ("speedup_end_to_end", "ref_ms", "sol_ms"),
                "device": ("speedup_device", "ref_device_ms", "sol_device_ms")}


def is_unjudgeable(verdict: dict[str, Any]) -> bool:
    """A problem-level outcome (the problem itself could not be judged), not a verdict on the solution."""
    return verdict.get("verdict") == "unjudgeable"


def label(verdict: dict[str, Any]) -> str:
    return verdict.get("problem_id") or Path(verdict.get("solution", "?")).name


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between order statistics (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


# ---------------------------------------------------------------------------------------------------------
# verdicts


def verdict_summary(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by verdict, and why the ones that do not count for fast_p failed, grouped by reason."""
    counts = Counter(v.get("verdict", "?") for v in verdicts)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for v in verdicts:
        if v.get("accepted") or is_unjudgeable(v):
            continue
        if v.get("verdict") == "correct":  # correct but held back by a blocking flag
            key = ("correct, not accepted", "flags: " + ", ".join(v.get("flags") or []))
        else:
            key = (v.get("verdict", "?"), (v.get("reason") or "").strip()[:300])
        groups[key].append(label(v))
    reasons = [{"verdict": k[0], "reason": k[1], "count": len(ids), "problems": sorted(ids)}
               for k, ids in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]
    accepted = sum(1 for v in verdicts if v.get("accepted"))
    return {"total": len(verdicts), "accepted": accepted, "counts": dict(sorted(counts.items())),
            "not_accepted": reasons}


def problem_outcomes(verdicts: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The unjudgeable rows: which problem, what kind of outcome, and why."""
    rows = []
    for v in verdicts:
        if is_unjudgeable(v):
            outcome = v.get("problem_outcome") or {}
            rows.append({"problem": label(v), "kind": str(outcome.get("kind", "?")),
                         "reason": str(outcome.get("reason") or v.get("reason") or "")})
    return sorted(rows, key=lambda r: (r["kind"], r["problem"]))


# ---------------------------------------------------------------------------------------------------------
# where the judge's time went


def memory_and_contracts(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """What issues 31 and 32 count over a sweep: verdicts whose text names a memory failure (out of memory, cuBLAS
    allocation, a busy device), how many were tried again alone or judged at a fitted preset, and how many problems
    each numerics contract judged: under tf32, under fp32 because tf32 could not tell answers apart
    (`contract_tightened`), or under neither (`degenerate_reference`)."""
    def text(v: dict[str, Any]) -> str:
        return " ".join(str(v.get(k) or "") for k in ("reason", "error_excerpt"))
    memory = sorted(v.get("problem_id") or "?" for v in verdicts if is_memory_failure(text(v)))
    flags = Counter(f for v in verdicts for f in v.get("flags") or ())
    judged = [v for v in verdicts if not is_unjudgeable(v)]
    tightened = sum(1 for v in judged if "contract_tightened" in (v.get("flags") or ()))
    return {"memory_failures": len(memory), "memory_failure_problems": memory,
            "checked_alone_again": flags["checked_alone_again"], "first_attempts": first_attempts(verdicts),
            "admitted_needs": admitted_needs(verdicts),
            "preset_fitted": flags["preset_fitted"],
            "unjudgeable": len(verdicts) - len(judged),
            "contracts": {"tf32": len(judged) - tightened, "fp32_tightened": tightened,
                          "degenerate_under_both": sum(1 for v in verdicts if is_unjudgeable(v) and
                                                       (v.get("problem_outcome") or {}).get("kind")
                                                       == "degenerate_reference")}}


def admitted_needs(verdicts: list[dict[str, Any]]) -> dict[str, int]:
    """How many judgements were admitted to the device with a need from each source (the reference process's
    figure, the shape plan's, an even share where neither had one: shapes.admitted_need.from), and how many of
    them alone for a need that fills the card ("alone")."""
    counts: Counter = Counter()
    for v in verdicts:
        need = (v.get("shapes") or {}).get("admitted_need")
        if isinstance(need, dict):
            counts[str(need.get("from") or "?")] += 1
            counts["alone"] += bool(need.get("alone"))
    return dict(counts)


def first_attempts(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each verdict judged again alone: where its first attempt failed, its last error line, and how many
    judgements the device had admitted and how full the card was as it ended (Verdict.first_attempt)."""
    rows = []
    for v in verdicts:
        first = v.get("first_attempt")
        if isinstance(first, dict):
            device = first.get("device") if isinstance(first.get("device"), dict) else {}
            used = _number(device.get("device_used_bytes"))
            rows.append({"problem": label(v), "failed_in": str(first.get("failed_in") or "?"),
                         "error": str(first.get("error") or first.get("reason") or ""),
                         "admitted": device.get("admitted"),
                         "used_gib": None if used is None else round(used / 2**30, 1)})
    return sorted(rows, key=lambda r: r["problem"])


def phase_totals(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum of every verdict's phases_s by phase (largest first). Solutions run in parallel, so the sums
    can exceed the run's wall time; wait_for_device is time a solution waited, not work."""
    totals: Counter = Counter()
    for v in verdicts:
        for phase, seconds in (v.get("phases_s") or {}).items():
            if _number(seconds) is not None:
                totals[phase] += seconds
    wall = sum(_number(v.get("wall_s")) or 0.0 for v in verdicts)
    phases = [{"phase": p, "total_s": round(s, 3)} for p, s in totals.most_common()]
    return {"phases": phases, "sum_wall_s": round(wall, 3)}


# phases a judgement spends in a turn with the device to itself (judging/solution_run.py: hold.time())
TIMING_TURN_PHASES = ("reference_timing", "solution_timing", "profile", "device_time", "speed_of_light")


def level_spans(verdicts: list[dict[str, Any]], started_at: Any = None) -> list[dict[str, Any]]:
    """Per level: when its first judgement started and its last verdict came (seconds after `started_at`, the run's
    start, where known; from each verdict's ended_at and wall_s), and its phases in timing turns (the device alone)
    and in every other phase but the waits: where a sweep's wall time went, level by level."""
    by_level: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in verdicts:
        if _number(v.get("ended_at")) is not None and _number(v.get("wall_s")) is not None:
            by_level[label(v).split("/")[0]].append(v)
    zero = _number(started_at) or min((v["ended_at"] - v["wall_s"] for vs in by_level.values() for v in vs),
                                      default=0.0)
    rows = []
    for level, vs in sorted(by_level.items()):
        phases = [v.get("phases_s") or {} for v in vs]
        timing = sum(_number(p.get(k)) or 0.0 for p in phases for k in TIMING_TURN_PHASES)
        other = sum(_number(s) or 0.0 for p in phases for k, s in p.items()
                    if k not in TIMING_TURN_PHASES and k != "wait_for_device")
        first = min(v["ended_at"] - v["wall_s"] for v in vs)
        last = max(v["ended_at"] for v in vs)
        rows.append({"level": level, "verdicts": len(vs), "from_s": round(first - zero, 1),
                     "to_s": round(last - zero, 1), "timing_turns_s": round(timing, 1),
                     "other_phases_s": round(other, 1)})
    return rows


def slowest(verdicts: list[dict[str, Any]], n: int = SHOWN) -> list[dict[str, Any]]:
    """The n verdicts that took longest (wall_s), each with its three largest phases."""
    timed = [v for v in verdicts if _number(v.get("wall_s")) is not None]
    timed.sort(key=lambda v: -v["wall_s"])
    rows = []
    for v in timed[:n]:
        phases = sorted((v.get("phases_s") or {}).items(), key=lambda item: -(_number(item[1]) or 0.0))
        rows.append({"problem": label(v), "verdict": v.get("verdict"), "wall_s": v["wall_s"],
                     "top_phases": {p: s for p, s in phases[:3]}})
    return rows


# ---------------------------------------------------------------------------------------------------------
# identity copies' speedups: every one of them should be 1.0


def speedup_stats(verdicts: list[dict[str, Any]], clock: str) -> dict[str, Any]:
    """Distribution of identity copies' speedups under one clock, and the false-positive rates of fast_p.

    The rates count as fast_p does (score.fast_p): accepted and speedup > p, over every judgeable identity
    copy (unjudgeable rows are left out of the caller's list). A perfect judge gives 1.0 and rates of 0."""
    field, ref_field, sol_field = CLOCK_FIELDS[clock]
    values = [x for x in (_number(v.get(field)) for v in verdicts) if x is not None]
    low, high = NEAR_ONE
    stats: dict[str, Any] = {
        "clock": clock, "field": field, "judged": len(verdicts), "count": len(values),
        "median": percentile(values, 50), "p5": percentile(values, 5), "p95": percentile(values, 95),
        "min": min(values) if values else None, "max": max(values) if values else None,
        "within_band": (sum(1 for x in values if low <= x <= high) / len(values)) if values else None,
        "below_band": (sum(1 for x in values if x < low) / len(values)) if values else None,
        "above_band": (sum(1 for x in values if x > high) / len(values)) if values else None,
        "outside_wide": (sum(1 for x in values if not WIDE[0] <= x <= WIDE[1]) / len(values)) if values else None,
        "band": list(NEAR_ONE), "wide_band": list(WIDE), "false_positives": {},
        # how the device times were taken (cuda_graph, profiler; host on the CPU, where both clocks are one)
        "device_clocks": dict(Counter(str(v.get("device_clock")) for v in verdicts
                                      if _number(v.get(field)) is not None)),
    }
    for p in FALSE_POSITIVE_AT:
        hits = [v for v in verdicts if v.get("accepted") and (_number(v.get(field)) or 0.0) > p]
        hits.sort(key=lambda v: -v[field])
        stats["false_positives"][f"fast_{p:g}"] = {
            "threshold": p, "count": len(hits), "rate": (len(hits) / len(verdicts)) if verdicts else None,
            "worst": [{"problem": label(v), "speedup": v[field], "ref_ms": v.get(ref_field),
                       "sol_ms": v.get(sol_field)} for v in hits[:SHOWN]],
        }
    return stats


# ---------------------------------------------------------------------------------------------------------
# the device's busy share


def idle_stretches(series: list[tuple[float, float]]) -> list[dict[str, Any]]:
    """Maximal runs of 0% samples in a (t, utilisation) series sorted by t.

    A stretch runs from its first 0% sample to the next busy sample (or to the last sample when the series
    ends idle), so its length is right to within one sampling interval. `leading`: no busy sample before it
    (start-up); `trailing`: none after it (wind-down)."""
    stretches, start, seen_busy = [], None, False
    for t, util in series:
        if util <= 0:
            if start is None:
                start = t
            continue
        if start is not None:
            stretches.append({"start": start, "end": t, "leading": not seen_busy, "trailing": False})
            start = None
        seen_busy = True
    if start is not None:
        stretches.append({"start": start, "end": series[-1][0], "leading": not seen_busy, "trailing": True})
    for s in stretches:
        s["duration"] = s["end"] - s["start"]
    return stretches


def _verdicts_by(host: list[dict[str, Any]], t: float) -> int | None:
    """Verdicts in the log at time t, from the last host sample taken at or before t."""
    before = [s for s in host if s["t"] <= t and s.get("verdicts") is not None]
    return before[-1]["verdicts"] if before else None


def _describe_stretch(stretch: dict[str, Any] | None, host: list[dict[str, Any]]) -> dict[str, Any] | None:
    if stretch is None:
        return None
    return dict(stretch, duration=round(stretch["duration"], 2), verdicts_before=_verdicts_by(host, stretch["start"]),
                verdicts_after=_verdicts_by(host, stretch["end"]))


def gpu_busy(samples: list[dict[str, Any]], host: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per GPU: mean utilisation, share of samples above 0%, memory, and the longest idle stretches."""
    by_gpu: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_gpu[s.get("gpu", 0)].append(s)
    host = sorted(host, key=lambda s: s["t"])
    rows = []
    for gpu, series in sorted(by_gpu.items(), key=lambda item: str(item[0])):
        series.sort(key=lambda s: s["t"])
        utils = [s["util"] for s in series]
        mems = [s["mem_mib"] for s in series if _number(s.get("mem_mib")) is not None]
        stretches = idle_stretches([(s["t"], s["util"]) for s in series])
        interior = [s for s in stretches if not s["leading"] and not s["trailing"]]
        longest = max(stretches, key=lambda s: s["duration"], default=None)
        longest_interior = max(interior, key=lambda s: s["duration"], default=None)
        rows.append({
            "gpu": gpu, "samples": len(series), "span_s": round(series[-1]["t"] - series[0]["t"], 2),
            "mean_util": sum(utils) / len(utils), "busy_share": sum(1 for u in utils if u > 0) / len(utils),
            "mean_mem_mib": (sum(mems) / len(mems)) if mems else None, "max_mem_mib": max(mems, default=None),
            "longest_idle": _describe_stretch(longest, host),
            "longest_interior_idle": _describe_stretch(longest_interior, host),
            "interior_idle_over_bar": sum(1 for s in interior if s["duration"] > IDLE_BAR_S),
        })
    return rows


def host_load(host: list[dict[str, Any]]) -> dict[str, Any] | None:
    loads = [s["load1"] for s in host if _number(s.get("load1")) is not None]
    cpu = [s["cpu_percent"] for s in host if _number(s.get("cpu_percent")) is not None]
    if not loads and not cpu:
        return None
    return {"samples": len(host), "mean_load1": (sum(loads) / len(loads)) if loads else None,
            "max_load1": max(loads, default=None), "mean_cpu_percent": (sum(cpu) / len(cpu)) if cpu else None}


# ---------------------------------------------------------------------------------------------------------
# the whole report


def machine(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """What the verdicts say they ran on: device names, devices, and every version key's values (counted)."""
    versions: dict[str, Counter] = defaultdict(Counter)
    for v in verdicts:
        for key, value in (v.get("versions") or {}).items():
            versions[key][str(value)] += 1
    return {"device_names": dict(Counter(v.get("device_name") or "?" for v in verdicts)),
            "devices": dict(Counter(v.get("device") or "?" for v in verdicts)),
            "versions": {k: dict(c.most_common()) for k, c in sorted(versions.items())}}


def summarize(verdicts: Iterable[dict[str, Any]], gpu_samples: list[dict[str, Any]] | None = None,
              host_samples: list[dict[str, Any]] | None = None, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report as one dict. `run`: what the sweep knows about itself (command, date, wall time, the
    sampler's status, problems not staged); anything it lacks is left out of the report."""
    rows = list(verdicts)
    judgeable = [v for v in rows if not is_unjudgeable(v)]
    host = host_samples or []
    return {
        "run": run or {},
        "machine": machine(rows),
        "verdicts": verdict_summary(rows),
        "memory_and_contracts": memory_and_contracts(rows),
        "problem_outcomes": problem_outcomes(rows),
        "speedups": {clock: speedup_stats(judgeable, clock) for clock in CLOCK_FIELDS},
        "device_clock_shares": device_clock_shares(judgeable),
        "floor": build_floor(judgeable),   # OUT/floor.json: the per-problem noise floor score --floor reads
        "phases": phase_totals(rows),
        "slowest": slowest(rows),
        "levels": level_spans(rows, (run or {}).get("started_at")),
        "gpu": gpu_busy(gpu_samples or [], host),
        "host": host_load(host),
    }
