"""Packaged reference baselines (eager and torch.compile times on the H200) and the report that makes them.

scripts/baselines.py measures (one JSON line per problem and mode); scripts/baselines_report.py turns the
lines into the data file shipped here (data/suite/baselines_h200.json) with build_data(), and into a
markdown summary with summary_markdown(). `kerneljudge score --baseline compile` reads the packaged file
through baseline_table(). Everything here is plain data: no torch, no problem code.

Data file layout:
  {"format": 1, "machine": {gpu, driver, torch, cuda, triton, python, cpu_count, ...}, "dates": [first, last],
   "device", "preset", "precision", "timing": "...", "commands": [...], "ceilings": {...}, "counts": {...},
   "problems": {problem_id: {level, category, problem_sha256, eager_ms, compile_ms, peak_mem_bytes, sol_ms,
                             sol_fraction, compile_s, ..., eager_status, compile_status, reason?}}}
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping

from kerneljudge.core.paths import suite_tables_root
from kerneljudge.suite.baseline_runner import row_status

DATA_DIR = suite_tables_root()
PACKAGED = DATA_DIR / "baselines_h200.json"
FORMAT = 1

# The suite's size bars (issue 4): eager reference time on the H200 and its peak memory in fp32.
EAGER_MS_RANGE = (0.5, 50.0)
PEAK_MEM_LIMIT = 6 * 10 ** 9   # bytes (6 GB, decimal: the stricter reading)

PACKAGED_NAMES = {"compile": ("compile", "compile_ms"), "eager": ("eager_h200", "eager_ms")}


class BaselineError(ValueError):
    """No usable baselines (missing, unreadable, or mixed configurations)."""


# --------------------------------------------------------------------------------------- reading back


def load(path: str | Path = PACKAGED) -> dict[str, Any]:
    p = Path(path)
    if not p.exists():
        raise BaselineError(f"no baselines file at {p}; measure them with scripts/baselines.py and package them "
                            "with scripts/baselines_report.py (see docs/baselines.md)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BaselineError(f"cannot read baselines {p}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("problems"), dict):
        raise BaselineError(f"{p} is not a baselines data file (no 'problems' object)")
    return data


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def baseline_table(data: Mapping[str, Any], mode: str = "compile", eager_fallback: bool = False) -> dict[str, float]:
    """problem_id -> median ms of the eager or torch.compile reference, for the problems measured.

    eager_fallback (compile only): where torch.compile failed or timed out on a problem, its eager time
    stands in (what one would run instead); problems never measured stay out.
    """
    key = f"{mode}_ms"
    out = {}
    for pid, entry in data.get("problems", {}).items():
        ms = entry.get(key)
        if _positive(ms):
            out[pid] = float(ms)
        elif (eager_fallback and mode == "compile" and entry.get("compile_status") in ("error", "timeout")
              and _positive(entry.get("eager_ms"))):
            out[pid] = float(entry["eager_ms"])
    return out


def describe(data: Mapping[str, Any]) -> str:
    m = data.get("machine", {})
    dates = data.get("dates") or ["?"]
    return (f"{m.get('gpu', '?')} (driver {m.get('driver', '?')}, torch {m.get('torch', '?')}), "
            f"{data.get('preset', '?')} preset, {data.get('precision', '?')}, measured {str(dates[-1])[:10]}")


# ------------------------------------------------------------------------------------------ building


def config_of(row: Mapping[str, Any]) -> tuple:
    return row.get("device"), row.get("preset"), row.get("precision") or "fp32"


def latest_rows(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(problem_id, mode) -> its row: the last successful one, else the last failure."""
    best: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in rows:
        key = (str(row.get("problem_id")), str(row.get("mode")))
        old = best.get(key)
        if old is None or row_status(row) == "ok" or row_status(old) != "ok":
            best[key] = row
    return best


def select_rows(rows: Iterable[Mapping[str, Any]], device: str | None, preset: str | None,
                precision: str | None) -> list[Mapping[str, Any]]:
    """Rows of one configuration. Raises BaselineError when the filters leave several (or none)."""
    rows = [r for r in rows
            if (device is None or r.get("device") == device) and (preset is None or r.get("preset") == preset)
            and (precision is None or (r.get("precision") or "fp32") == precision)]
    configs = sorted({config_of(r) for r in rows}, key=str)
    if not rows:
        raise BaselineError("no rows for this device/preset/precision")
    if len(configs) > 1:
        raise BaselineError(f"rows of several configurations {configs}; choose one with --device/--preset/--precision")
    return rows


def _machine(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    keys = ("device_name", "driver", "torch", "cuda", "triton", "python", "capability", "sm_count", "memory_bytes",
            "cpu_count", "nvidia_smi", "workers", "compile_threads", "device_slots", "commit")
    seen: dict[str, list[Any]] = {}
    for r in rows:
        for k in keys:
            v = (r.get("machine") or {}).get(k)
            if v is not None and v not in seen.setdefault(k, []):
                seen[k].append(v)
    out = {("gpu" if k == "device_name" else k): (v[0] if len(v) == 1 else v) for k, v in seen.items()}
    return out


def build_data(rows: Iterable[Mapping[str, Any]], sol: Mapping[str, Mapping[str, Any]] | None = None,
               suite_sha: Mapping[str, str] | None = None, ceilings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The packaged data from the rows of ONE configuration (see select_rows).

    sol: problem_id -> a speed-of-light row (judging.roofline.bound fields: sol_ms, bound_by, ...);
    suite_sha: problem_id -> sha256 of the problem file now, to flag measurements of an older text.
    """
    rows = list(rows)
    latest = latest_rows(rows)
    pids = sorted({pid for pid, _ in latest}, key=_order)
    problems: dict[str, dict[str, Any]] = {}
    for pid in pids:
        eager, compiled = latest.get((pid, "eager")), latest.get((pid, "compile"))
        first = eager or compiled
        entry: dict[str, Any] = {"level": first.get("level"), "category": first.get("category"),
                                 "problem_sha256": first.get("problem_sha256")}
        reasons = []
        for mode, row in (("eager", eager), ("compile", compiled)):
            if row is None:
                entry[f"{mode}_status"] = "not_measured"
                entry[f"{mode}_ms"] = None
                continue
            status = row_status(row)
            entry[f"{mode}_status"] = status
            ok = status == "ok"
            timing = row.get("timing") or {}
            entry[f"{mode}_ms"] = row.get("ref_ms") if ok else None
            if ok:
                entry[f"{mode}_ci95_ms"] = [timing.get("ci95_low_ms"), timing.get("ci95_high_ms")]
                entry[f"{mode}_samples"] = timing.get("samples")
            else:
                reasons.append(f"{mode}: {row.get('reason') or row.get('error') or status}"[:300])
            if mode == "eager":
                entry["peak_mem_bytes"] = row.get("peak_mem_bytes")
            else:
                entry["compile_s"] = row.get("compile_s")
                entry["compile_peak_mem_bytes"] = row.get("peak_mem_bytes")
                if row.get("graph_breaks") is not None:
                    entry["graph_breaks"] = row.get("graph_breaks")
            if row.get("problem_sha256") != entry["problem_sha256"]:
                reasons.append(f"{mode} was measured on another version of the problem file")
        bound = (sol or {}).get(pid) or {}
        entry["sol_ms"] = bound.get("sol_ms")
        entry["bound_by"] = bound.get("bound_by")
        entry["sol_fraction"] = (entry["sol_ms"] / entry["eager_ms"]
                                 if entry["sol_ms"] and entry.get("eager_ms") else None)
        entry["compile_speedup"] = (entry["eager_ms"] / entry["compile_ms"]
                                    if entry.get("eager_ms") and entry.get("compile_ms") else None)
        if suite_sha is not None and pid in suite_sha and suite_sha[pid] != entry["problem_sha256"]:
            entry["stale"] = True
            reasons.append("the problem file changed since it was measured")
        if reasons:
            entry["reason"] = "; ".join(reasons)
        problems[pid] = entry
    dates = sorted(str(r.get("date")) for r in rows if r.get("date"))
    commands = []
    for r in rows:
        cmd = (r.get("machine") or {}).get("command")
        if cmd and cmd not in commands:
            commands.append(cmd)
    device, preset, precision = config_of(rows[0]) if rows else (None, None, None)
    budgets = sorted({r.get("budget_s") for r in rows if r.get("budget_s") is not None})
    data = {
        "format": FORMAT, "machine": _machine(rows), "dates": [dates[0], dates[-1]] if dates else [],
        "device": device, "preset": preset, "precision": precision,
        "timing": "kerneljudge.worker.reference.time_locally (the judge's method: fresh inputs per call, "
                  + ("L2 flushed, CUDA events" if device == "cuda" else "host clock")
                  + ", adaptive warm-up and stopping), budget "
                  + ", ".join(f"{b:g}" for b in budgets) + " s per problem and mode; torch.compile default mode, "
                  "compiled and called twice before timing; timings serialised per device",
        "commands": commands, "ceilings": dict(ceilings or {}), "counts": counts(problems), "problems": problems,
    }
    return data


def counts(problems: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"problems": len(problems)}
    for mode in ("eager", "compile"):
        tally: dict[str, int] = {}
        for e in problems.values():
            s = e.get(f"{mode}_status", "not_measured")
            tally[s] = tally.get(s, 0) + 1
        out[mode] = dict(sorted(tally.items()))
    return out


def _order(pid: str) -> tuple:
    level, _, stem = pid.partition("/")
    head = stem.split("_", 1)[0]
    digits = "".join(c for c in level if c.isdigit())
    return int(digits) if digits else 0, int(head) if head.isdigit() else 1 << 30, pid


# ---------------------------------------------------------------------------------------- summaries


def geomean(values: Iterable[float]) -> float | None:
    logs = [math.log(v) for v in values if isinstance(v, (int, float)) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def quantiles(values: Iterable[float], qs=(0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)) -> dict[str, float]:
    xs = sorted(v for v in values if isinstance(v, (int, float)))
    if not xs:
        return {}
    out = {}
    for q in qs:
        pos = q * (len(xs) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(xs) - 1)
        out[f"p{round(q * 100)}"] = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    return out


def size_violations(problems: Mapping[str, Mapping[str, Any]], ms_range=EAGER_MS_RANGE,
                    mem_limit: int = PEAK_MEM_LIMIT) -> dict[str, list[tuple[str, float]]]:
    """Problems whose eager time is outside ms_range (too fast / too slow) or whose peak is over mem_limit."""
    lo, hi = ms_range
    fast, slow, big = [], [], []
    for pid, e in problems.items():
        ms, peak = e.get("eager_ms"), e.get("peak_mem_bytes")
        if isinstance(ms, (int, float)):
            if ms < lo:
                fast.append((pid, ms))
            elif ms > hi:
                slow.append((pid, ms))
        if isinstance(peak, (int, float)) and peak > mem_limit:
            big.append((pid, peak))
    return {"under": fast, "over": slow, "memory": big}


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def summary_markdown(data: Mapping[str, Any], title: str | None = None, raw_files: Iterable[str] = ()) -> str:
    m = data.get("machine", {})
    problems = data.get("problems", {})
    dates = data.get("dates") or ["?"]
    gpu = m.get("gpu", "?")
    lines = [f"# {title or f'Reference baselines on {gpu}, {str(dates[-1])[:10]}'}", ""]
    lines += [f"- GPU: {gpu}; driver {m.get('driver', '?')}; compute capability {m.get('capability', '?')}; "
              f"{_fmt(m.get('cpu_count'))} CPU cores; {_fmt(m.get('workers'))} worker processes, "
              f"{_fmt(m.get('compile_threads'))} compile threads each; GPUs used: {m.get('device_slots', '?')}",
              f"- versions: torch {m.get('torch', '?')}, CUDA {m.get('cuda', '?')}, Triton {m.get('triton', '?')}, "
              f"Python {m.get('python', '?')}" + (f"; commit {m['commit']}" if m.get("commit") else ""),
              f"- measured: {' to '.join(str(d) for d in dates)}; {data.get('device')}, {data.get('preset')} preset, "
              f"{data.get('precision')}",
              f"- timing: {data.get('timing', '?')}"]
    for cmd in data.get("commands", []):
        lines.append(f"- command: `python3 {cmd}`")
    for f in raw_files:
        lines.append(f"- raw lines: `{f}`")
    ceil = data.get("ceilings") or {}
    if ceil:
        lines.append("- speed-of-light ceilings: " + "; ".join(f"{k} {_fmt(v.get('value'))} ({v.get('source')})"
                                                              for k, v in ceil.items() if isinstance(v, dict)))
    lines += ["", "## Counts", "", "| level | problems | eager ok | compile ok | failed | timed out | not measured |",
              "|---|---|---|---|---|---|---|"]
    by_level: dict[Any, list[Mapping[str, Any]]] = {}
    for e in problems.values():
        by_level.setdefault(e.get("level"), []).append(e)
    for level in sorted(by_level, key=lambda x: (x is None, x)) + ["all"]:
        es = list(problems.values()) if level == "all" else by_level[level]
        st = [e.get("eager_status") for e in es] + [e.get("compile_status") for e in es]
        lines.append(f"| {level} | {len(es)} | {sum(e.get('eager_status') == 'ok' for e in es)} | "
                     f"{sum(e.get('compile_status') == 'ok' for e in es)} | {st.count('error')} | "
                     f"{st.count('timeout')} | {st.count('not_measured')} |")

    lo, hi = EAGER_MS_RANGE
    viol = size_violations(problems)
    measured_eager = sum(1 for e in problems.values() if e.get("eager_ms"))
    measured_mem = sum(1 for e in problems.values() if isinstance(e.get("peak_mem_bytes"), (int, float)))
    lines += ["", "## Size bars", "",
              f"Eager reference time within {lo:g}-{hi:g} ms: {measured_eager - len(viol['under']) - len(viol['over'])}"
              f" of {measured_eager} measured. Peak GPU memory of the eager reference (model, inputs and one "
              f"forward; torch.cuda.max_memory_allocated) under {PEAK_MEM_LIMIT / 1e9:g} GB: "
              f"{measured_mem - len(viol['memory'])} of {measured_mem} measured.", ""]
    for key, label, unit in (("under", f"faster than {lo:g} ms", "ms"), ("over", f"slower than {hi:g} ms", "ms"),
                             ("memory", f"peak over {PEAK_MEM_LIMIT / 1e9:g} GB", "GB")):
        items = viol[key]
        text = ", ".join(f"{pid} ({_fmt(v / 1e9 if unit == 'GB' else v)} {unit})" for pid, v in items) or "none"
        lines.append(f"- {label} ({len(items)}): {text}")

    both = [(pid, e) for pid, e in problems.items() if e.get("eager_ms") and e.get("compile_ms")]
    ratio = geomean(e["compile_ms"] / e["eager_ms"] for _, e in both)
    lines += ["", "## torch.compile against eager", "",
              f"Geometric mean of compile_ms / eager_ms over {len(both)} problems: {_fmt(ratio)} "
              f"(below 1: torch.compile is faster). Slower than eager: "
              f"{sum(1 for _, e in both if e['compile_ms'] > e['eager_ms'])} problems.", "",
              "| level | problems | geomean compile/eager | median compile time (s) |", "|---|---|---|---|"]
    for level in sorted({e.get("level") for _, e in both}, key=lambda x: (x is None, x)):
        es = [e for _, e in both if e.get("level") == level]
        cs = quantiles([e.get("compile_s") for e in es if e.get("compile_s") is not None]).get("p50")
        lines.append(f"| {level} | {len(es)} | {_fmt(geomean(e['compile_ms'] / e['eager_ms'] for e in es))} | "
                     f"{_fmt(cs)} |")

    fractions = {pid: e["sol_fraction"] for pid, e in problems.items() if e.get("sol_fraction") is not None}
    lines += ["", "## Fraction of speed of light (eager)", "",
              f"sol_ms / eager_ms for {len(fractions)} problems (1.0 would be a reference at the bound; the bound "
              "counts matmul/conv/attention FLOPs and the bytes that must move once, so elementwise-heavy work "
              "looks closer to it than it is)."]
    if fractions:
        q = quantiles(fractions.values())
        lines.append("")
        lines.append("| " + " | ".join(q) + " |")
        lines.append("|" + "---|" * len(q))
        lines.append("| " + " | ".join(_fmt(v) for v in q.values()) + " |")
        buckets = [(0, 0.01), (0.01, 0.1), (0.1, 0.5), (0.5, 1.0), (1.0, math.inf)]
        lines.append("")
        lines.append("| fraction | " + " | ".join(f"[{a:g}, {b:g})" for a, b in buckets) + " |")
        lines.append("|---|" + "---|" * len(buckets))
        lines.append("| problems | " + " | ".join(str(sum(1 for f in fractions.values() if a <= f < b))
                                                  for a, b in buckets) + " |")
        over = sorted(pid for pid, f in fractions.items() if f > 1.0)
        if over:
            lines.append("")
            lines.append("Above 1 (faster than the bound: a counting or ceiling error to look into): "
                         + ", ".join(over))

    failed = [(pid, e) for pid, e in problems.items() if e.get("reason")]
    if failed:
        lines += ["", "## Not measured, failed or stale", ""]
        lines += [f"- {pid}: {e['reason']}" for pid, e in failed]
    lines += ["", "## Per problem", "", "| problem | eager ms | compile ms | compile/eager | peak GB | SOL ms | "
              "SOL fraction |", "|---|---|---|---|---|---|---|"]
    for pid, e in problems.items():
        r = e["compile_ms"] / e["eager_ms"] if e.get("eager_ms") and e.get("compile_ms") else None
        peak = e.get("peak_mem_bytes")
        lines.append(f"| {pid} | {_fmt(e.get('eager_ms'))} | {_fmt(e.get('compile_ms'))} | {_fmt(r)} | "
                     f"{_fmt(peak / 1e9 if isinstance(peak, (int, float)) else None)} | {_fmt(e.get('sol_ms'))} | "
                     f"{_fmt(e.get('sol_fraction'))} |")
    return "\n".join(lines) + "\n"
