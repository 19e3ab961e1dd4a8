"""The judge's noise floor per problem and clock, from identity copies, and where a solution's speedup lies on it.

An identity copy is a problem's own code submitted as its solution (scripts/upstream_sweep.py judges one per
upstream problem): it is exactly as fast as the reference, so the speedup the judge gives it is the judge's
noise on that problem. build_floor() turns identity copies' verdicts into a floor file; `kerneljudge score
--floor FILE` and `kerneljudge report --floor FILE` read it (read_floor) and mark each accepted, timed
solution's speedup `within_noise` when it lies inside its problem's band for the clock it was timed on, else
`above_noise` or `below_noise` (position()). A speedup with no floor to compare against is not marked.

The band of one problem and clock: the identity copy's speedup s and its 95% interval [lo, hi] say the judge
may put an equal pair anywhere from 1 to as far as the farthest of s, lo, hi; noise moves a ratio either way,
so the band is that distance both ways on a log scale: w = max |ln x| over x in (s, lo, hi), band [e^-w, e^w].
(An identity copy at 1.03 [0.99, 1.06] gives [0.943, 1.06].) The band is computed from speedup and ci95 when
the file is read; the file's own "band" is for people reading it.

The floor file (JSON):
    {"kind": "kerneljudge-noise-floor", "version": 1, "device_names": {"NVIDIA H200": 250},
     "problems": {"level1/19_ReLU": {
         "problem_sha256": "...",                                   (a changed problem file gets no mark)
         "end_to_end": {"speedup": 1.01, "ci95": [0.98, 1.04], "copies": 1, "band": [0.962, 1.04]},
         "device": {"speedup": 0.99, "ci95": [0.97, 1.01], "device_clock": "cuda_graph", "copies": 1,
                    "band": [0.971, 1.03]}}}}
A clock is absent where the identity copy was not correct and timed on it. With several identity verdicts of a
problem (a log holding several runs) an entry takes the speedup farthest from 1 and the hull of the intervals.
A device-clock speedup is compared only with a floor taken by the same device clock (cuda_graph, profiler or
host): graph replays and the profiler's summed kernel times are different measurements.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from typing import Any, Iterable, Mapping, Optional

from kerneljudge.core import atomic_file
from kerneljudge.results.speedup_interval import device_speedup_interval
from kerneljudge.results.verdict_rows import is_unjudgeable, problem_of

KIND = "kerneljudge-noise-floor"
VERSION = 1
CLOCKS = ("end_to_end", "device")
POSITIONS = ("within_noise", "above_noise", "below_noise")
ROWS_LISTED = 50      # the within-noise rows a summary names (all are counted)
NOT_TIMED = "not accepted and timed"


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _interval(value: Any) -> Optional[tuple[float, float]]:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(_positive(x) for x in value) \
            and value[0] <= value[1]:
        return float(value[0]), float(value[1])
    return None


def band(speedup: float, ci95: Optional[Iterable[float]] = None) -> tuple[float, float]:
    """[e^-w, e^w] with w the farthest of the speedup and its interval's ends from 1 on a log scale."""
    points = [speedup, *(ci95 or ())]
    width = max(abs(math.log(x)) for x in points)
    return math.exp(-width), math.exp(width)


# --- building a floor from identity copies --------------------------------------------------------------


def _measurement(v: Mapping[str, Any], clock: str) -> Optional[dict[str, Any]]:
    """One identity verdict's speedup and interval on one clock; None when it was not accepted and timed there."""
    if not v.get("accepted"):
        return None
    if clock == "end_to_end":
        speedup, ci = v.get("speedup_end_to_end"), _interval(v.get("speedup_ci95"))
        extra: dict[str, Any] = {}
    else:
        speedup, ci = v.get("speedup_device"), device_speedup_interval(v)
        extra = {"device_clock": v.get("device_clock")}
    if not _positive(speedup):
        return None
    return {"speedup": float(speedup), "ci95": list(ci) if ci else None, **extra}


def _merge(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Several copies' measurements of one problem and clock: the speedup farthest from 1, the intervals' hull."""
    worst = max(found, key=lambda m: abs(math.log(m["speedup"])))
    intervals = [m["ci95"] for m in found if m["ci95"]]
    ci = [min(i[0] for i in intervals), max(i[1] for i in intervals)] if intervals else None
    entry = {**worst, "ci95": ci, "copies": len(found)}
    entry["band"] = [round(x, 6) for x in band(entry["speedup"], ci)]
    return entry


def build_floor(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The floor file's content from identity copies' verdicts (unjudgeable ones are left out)."""
    rows = [v for v in verdicts if not is_unjudgeable(v)]
    problems: dict[str, dict[str, Any]] = {}
    for pid in sorted({problem_of(v) for v in rows}):
        mine = [v for v in rows if problem_of(v) == pid]
        entry: dict[str, Any] = {}
        shas = {v.get("problem_sha256") for v in mine if v.get("problem_sha256")}
        if len(shas) == 1:
            entry["problem_sha256"] = shas.pop()
        for clock in CLOCKS:
            found = [m for m in (_measurement(v, clock) for v in mine) if m is not None]
            if clock == "device":   # one device clock per entry: the one most copies were timed by
                methods = Counter(m["device_clock"] for m in found)
                found = [m for m in found if m["device_clock"] == methods.most_common(1)[0][0]] if found else []
            if found:
                entry[clock] = _merge(found)
        if any(clock in entry for clock in CLOCKS):
            problems[pid] = entry
    names = Counter(str(v.get("device_name") or "?") for v in rows)
    return {"kind": KIND, "version": VERSION, "device_names": dict(names.most_common()), "problems": problems}


def write_floor(path: str | os.PathLike, floor: Mapping[str, Any]) -> None:
    atomic_file.write_text(path, json.dumps(floor, indent=1, sort_keys=True) + "\n")


# --- reading a floor and placing speedups on it ---------------------------------------------------------


def read_floor(path: str | os.PathLike) -> dict[str, Any]:
    """A floor file, checked; ValueError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read noise floor {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("problems"), dict):
        raise ValueError(f"{path} is not a noise floor file (kind {KIND!r} with a 'problems' object; "
                         "scripts/upstream_sweep.py writes one as floor.json)")
    for pid, entry in data["problems"].items():
        if not isinstance(entry, dict):
            raise ValueError(f"noise floor {path}: {pid} is not an object")
        for clock in CLOCKS:
            got = entry.get(clock)
            if got is None:
                continue
            if not isinstance(got, dict) or not _positive(got.get("speedup")) \
                    or (got.get("ci95") is not None and _interval(got["ci95"]) is None):
                raise ValueError(f"noise floor {path}: {pid} {clock} needs a positive speedup and a ci95 of two "
                                 f"positive numbers (low <= high) or null; got {got!r}")
    return data


def position(v: Mapping[str, Any], floor: Mapping[str, Any]) -> tuple[Optional[str], dict[str, Any]]:
    """Where an accepted, timed row's speedup lies against its problem's floor for its clock: ("within_noise" |
    "above_noise" | "below_noise", the floor entry with its band), or (None, {"why": ...}) when not comparable."""
    speedup = v.get("speedup")
    if not v.get("accepted") or not _positive(speedup):
        return None, {"why": NOT_TIMED}
    entry = floor.get("problems", {}).get(problem_of(v))
    if entry is None:
        return None, {"why": "no floor for the problem"}
    sha = entry.get("problem_sha256")
    if sha and v.get("problem_sha256") and sha != v["problem_sha256"]:
        return None, {"why": "the problem file differs from the one the floor was measured on"}
    clock = "device" if v.get("clock") == "device" else "end_to_end"
    got = entry.get(clock)
    if got is None:
        return None, {"why": f"no {clock} floor for the problem"}
    if clock == "device" and got.get("device_clock") != v.get("device_clock"):
        return None, {"why": f"the floor's device clock is {got.get('device_clock')}, the row's "
                             f"{v.get('device_clock')}"}
    low, high = band(float(got["speedup"]), _interval(got.get("ci95")))
    found = dict(got, clock=clock, band=[low, high])
    if speedup > high:
        return "above_noise", found
    if speedup < low:
        return "below_noise", found
    return "within_noise", found


def floor_summary(rows: Iterable[Mapping[str, Any]], floor: Mapping[str, Any],
                  source: str = "") -> dict[str, Any]:
    """Counts of accepted, timed rows by position on the floor (and those with none), and the within-noise rows
    by name, faster-claiming ones first."""
    counts = Counter({p: 0 for p in (*POSITIONS, "no_floor")})
    within: list[dict[str, Any]] = []
    timed = 0
    for v in rows:
        where, found = position(v, floor)
        if found.get("why") == NOT_TIMED:
            continue
        timed += 1
        counts[where or "no_floor"] += 1
        if where == "within_noise":
            within.append({"problem_id": problem_of(v), "sample": v.get("sample"), "turn": v.get("turn"),
                           "speedup": v["speedup"], "clock": found["clock"],
                           "band": [round(x, 4) for x in found["band"]]})
    within.sort(key=lambda r: (-r["speedup"], r["problem_id"]))
    return {"file": source, "floor_problems": len(floor.get("problems", {})),
            "floor_device_names": floor.get("device_names", {}), "timed": timed, **counts,
            "within_noise_faster": sum(1 for r in within if r["speedup"] > 1.0),
            "within_noise_rows": within[:ROWS_LISTED]}


def floor_line(summary: Mapping[str, Any]) -> str:
    """One paragraph for text output."""
    listed = summary.get("within_noise_rows") or []
    names = ", ".join(f"{r['problem_id']} {r['speedup']:.3f}x" for r in listed[:5] if r["speedup"] > 1.0)
    return (f"noise floor ({summary.get('file') or 'given'}, {summary.get('floor_problems', 0)} problems): of "
            f"{summary.get('timed', 0)} accepted, timed rows {summary.get('within_noise', 0)} within noise "
            f"({summary.get('within_noise_faster', 0)} of them above 1x), {summary.get('above_noise', 0)} above, "
            f"{summary.get('below_noise', 0)} below, {summary.get('no_floor', 0)} with no floor to compare"
            + (f"; within noise though above 1x: {names}" + (" ..." if summary.get("within_noise_faster", 0) > 5
                                                               else "") if names else ""))


def other_device_warning(rows: Iterable[Mapping[str, Any]], floor: Mapping[str, Any]) -> Optional[str]:
    """A floor measured on another GPU says little about this run's noise: the warning, or None."""
    measured = {str(n) for n in floor.get("device_names", {}) if n and n != "?"}
    judged = sorted({str(v["device_name"]) for v in rows if v.get("device_name")} - measured)
    if not measured or not judged:
        return None
    return (f"warning: the noise floor was measured on {', '.join(sorted(measured))} but rows were judged on "
            f"{', '.join(judged)}")
