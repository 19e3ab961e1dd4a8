"""The upstream sweep's report as markdown (OUT/report.md): render_markdown() over the dict that
upstream_sweep_report.summarize() returns. Pure text formatting; every number comes from that dict."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sweep_floor_report import NEAR_ONE, WIDE, floor_lines
from upstream_sweep_report import FALSE_POSITIVE_AT, IDLE_BAR_S, SHOWN


def _f(value: Any, spec: str = ".3f", none: str = "-") -> str:
    return none if value is None else format(value, spec)


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]


def _when(offset: float, run: dict[str, Any]) -> str:
    started = run.get("started_at")
    if not isinstance(started, (int, float)):
        return f"t+{offset:.1f} s"
    clock = dt.datetime.fromtimestamp(started + offset, dt.timezone.utc).strftime("%H:%M:%S UTC")
    return f"t+{offset:.1f} s ({clock})"


def _header(s: dict[str, Any]) -> list[str]:
    run, m = s["run"], s["machine"]
    lines = ["# Upstream KernelBench identity sweep", ""]
    if run.get("command"):
        lines += ["```", run["command"], "```", ""]
    for key, title in (("date", "Date"), ("host", "Host"), ("problems_dir", "Problems"), ("log", "Run log")):
        if run.get(key):
            lines.append(f"- {title}: {run[key]}")
    lines.append("- Device: " + ", ".join(f"{n} ({c})" for n, c in m["device_names"].items()) + "; devices: "
                 + ", ".join(f"{d} ({c})" for d, c in m["devices"].items()))
    for key, values in m["versions"].items():
        mixed = len(values) > 1  # several values in one sweep: say how many verdicts had each
        lines.append(f"- {key}: " + ", ".join(f"{v} ({c})" if mixed else f"{v}" for v, c in values.items()))
    if run.get("wall_s") is not None:
        lines.append(f"- Wall time of this invocation: {run['wall_s']:.1f} s "
                     f"({run.get('judged_now', '?')} verdicts judged now, {run.get('resumed', '?')} from earlier runs)")
    hard = run.get("hard")
    if hard:   # --hard N: a memory-pressure subset, not the whole selection
        chosen = ", ".join(f"{pid} ({need / 2**30:.1f} GiB)" if isinstance(need, int) else pid
                           for pid, need in hard.get("need_bytes", {}).items())
        lines.append(f"- Subset: --hard {hard.get('n')}, the problems expected to need the most device memory "
                     f"({hard.get('precision')}, estimated on the meta device): {chosen}")
    for item in run.get("not_staged") or []:
        lines.append(f"- Not staged: {item['problem']}: {item['reason']}")
    return lines + [""]


def _verdict_lines(s: dict[str, Any]) -> list[str]:
    v = s["verdicts"]
    lines = ["## Verdicts", "", f"{v['total']} identity copies, {v['accepted']} accepted.", ""]
    lines += _table(["verdict", "count"], [[k, n] for k, n in v["counts"].items()]) + [""]
    if v["not_accepted"]:
        lines += ["Not accepted, grouped by reason:", ""]
        lines += _table(["verdict", "count", "reason", "problems"],
                        [[r["verdict"], r["count"], r["reason"][:160], ", ".join(r["problems"][:SHOWN])
                          + (" ..." if len(r["problems"]) > SHOWN else "")] for r in v["not_accepted"]]) + [""]
    outcomes = s["problem_outcomes"]
    lines += ["## Problem-level outcomes (unjudgeable)", ""]
    if not outcomes:
        return lines + ["None.", ""]
    lines += ["Left out of the speedup statistics.", ""]
    rows = [[o["problem"], o["kind"], o["reason"]] for o in outcomes]
    return lines + _table(["problem", "kind", "reason"], rows) + [""]


def _memory_lines(s: dict[str, Any]) -> list[str]:
    m = s.get("memory_and_contracts")
    if not m:
        return []
    named = ", ".join(m["memory_failure_problems"][:SHOWN]) + (" ..." if m["memory_failures"] > SHOWN else "")
    c = m["contracts"]
    return ["## Memory and contracts", "",
            f"- Verdicts that name a memory failure (out of memory, cuBLAS allocation, a busy device): "
            f"**{m['memory_failures']}**" + (f" ({named})" if named else ""),
            f"- Judged again alone after a memory failure (`checked_alone_again`): {m['checked_alone_again']}; "
            f"at a preset fitted to the device's memory (`preset_fitted`): {m['preset_fitted']}",
            f"- Contracts: {c['tf32']} judged under tf32 (the default), {c['fp32_tightened']} under fp32 where tf32 "
            f"could not tell answers apart (`contract_tightened`), {c['degenerate_under_both']} degenerate under "
            f"both; unjudgeable in all: {m['unjudgeable']}"] + _need_lines(m.get("admitted_needs") or {}) + [""] \
        + _first_attempt_lines(m.get("first_attempts") or [])


def _need_lines(needs: dict[str, int]) -> list[str]:
    if not needs:
        return []
    sources = ", ".join(f"{needs[k]} from {k.replace('_', ' ')}" for k in ("reference", "shape_plan", "even_share")
                        if needs.get(k))
    return [f"- Admitted to the device with a memory need ({sources}); alone, their need filling the card: "
            f"{needs.get('alone', 0)}"]


def _first_attempt_lines(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    return (["Where the verdicts judged again alone first failed (`first_attempt`; the device as that attempt ended):",
             ""]
            + _table(["problem", "failed in", "error", "admitted", "card used GiB"],
                     [[r["problem"], r["failed_in"], r["error"][:140], r["admitted"], r["used_gib"]] for r in rows])
            + [""])


def _speedup_lines(s: dict[str, Any]) -> list[str]:
    stats = s["speedups"]
    clocks = list(stats)
    low, high = NEAR_ONE
    lines = ["## Identity copies' speedups", "",
             "Each solution is its problem's own code, so every speedup should be 1.0; the spread is the judge's "
             "noise floor, and the fast_p rates are false positives.", ""]
    rows = [["timed", *[stats[c]["count"] for c in clocks]]]
    for key in ("median", "p5", "p95", "min", "max"):
        rows.append([key, *[_f(stats[c][key]) for c in clocks]])
    rows.append([f"below {low}", *[_pct(stats[c]["below_band"]) for c in clocks]])
    rows.append([f"within [{low}, {high}]", *[_pct(stats[c]["within_band"]) for c in clocks]])
    rows.append([f"above {high}", *[_pct(stats[c]["above_band"]) for c in clocks]])
    rows.append([f"outside [{WIDE[0]}, {WIDE[1]}]", *[_pct(stats[c]["outside_wide"]) for c in clocks]])
    for p in FALSE_POSITIVE_AT:
        key = f"fast_{p:g}"
        rows.append([f"{key} (false positives)", *[f"{_pct(stats[c]['false_positives'][key]['rate'])} "
                                                   f"({stats[c]['false_positives'][key]['count']})" for c in clocks]])
    lines += _table(["", *[f"{c} (`{stats[c]['field']}`)" for c in clocks]], rows) + [""]
    taken = ", ".join(f"{k} ({n})" for k, n in stats.get("device", {}).get("device_clocks", {}).items())
    if taken:
        lines += [f"Device times taken by: {taken} (`host` is the host clock: then both columns are one clock).", ""]
    for c in clocks:
        for key, fp in stats[c]["false_positives"].items():
            if fp["worst"]:
                lines += [f"Worst {key} offenders, {c} clock:", ""]
                lines += _table(["problem", "speedup", "ref ms", "sol ms"],
                                [[w["problem"], _f(w["speedup"]), _f(w["ref_ms"], ".4f"), _f(w["sol_ms"], ".4f")]
                                 for w in fp["worst"]]) + [""]
    return lines


def _stretch_text(stretch: dict[str, Any] | None, run: dict[str, Any]) -> str:
    if stretch is None:
        return "none"
    return (f"{stretch['duration']:.1f} s from {_when(stretch['start'], run)} "
            f"(verdicts in the log: {_f(stretch['verdicts_before'], 'd')} before, "
            f"{_f(stretch['verdicts_after'], 'd')} after)")


def _busy_lines(s: dict[str, Any]) -> list[str]:
    run = s["run"]
    lines = ["## Device busy share", ""]
    sampler = run.get("gpu_sampler")
    if sampler:
        lines += [f"Sampler: {sampler}.", ""]
    if not s["gpu"]:
        lines += ["No GPU samples: utilisation was not sampled on this run.", ""]
    for g in s["gpu"]:
        over = g["interior_idle_over_bar"]
        lines += [f"GPU {g['gpu']}: {g['samples']} samples over {g['span_s']:.1f} s; mean utilisation "
                  f"{g['mean_util']:.1f}%, above 0% in {_pct(g['busy_share'])} of samples; memory used "
                  f"mean {_f(g['mean_mem_mib'], '.0f')} MiB, max {_f(g['max_mem_mib'], '.0f')} MiB.", "",
                  f"- Longest stretch at 0%: {_stretch_text(g['longest_idle'], run)}"
                  + (" (start-up)" if g["longest_idle"] and g["longest_idle"]["leading"] else "")
                  + (" (wind-down)" if g["longest_idle"] and g["longest_idle"]["trailing"] else ""),
                  f"- Longest between the first and last busy sample: {_stretch_text(g['longest_interior_idle'], run)}",
                  f"- Such stretches over {IDLE_BAR_S:g} s (the bar, when work was waiting): {over}", ""]
    host = s["host"]
    if host:
        lines += [f"Host: load average (1 min) mean {_f(host['mean_load1'], '.2f')}, max {_f(host['max_load1'], '.2f')}"
                  + (f" on {run['cpu_count']} cores" if run.get("cpu_count") else "")
                  + (f"; CPU busy mean {host['mean_cpu_percent']:.0f}%" if host["mean_cpu_percent"] is not None else "")
                  + f" ({host['samples']} samples).", ""]
    return lines


def _time_lines(s: dict[str, Any]) -> list[str]:
    phases = s["phases"]
    total = sum(p["total_s"] for p in phases["phases"]) or 1.0
    lines = ["## Where the judge's time went", "",
             f"Sum of every verdict's `phases_s` (solutions overlap, so sums exceed the wall time; sum of wall_s: "
             f"{phases['sum_wall_s']:.1f} s).", ""]
    lines += _table(["phase", "total s", "share"],
                    [[p["phase"], f"{p['total_s']:.1f}", _pct(p["total_s"] / total)] for p in phases["phases"]]) + [""]
    if s.get("levels"):
        lines += ["By level: when its first judgement started and its last verdict came (seconds after the run "
                  "started), and the seconds its judgements spent in turns with the device alone (timing, profile, "
                  "device clock) and in their other phases (checks, builds, preparation; waits left out):", ""]
        lines += _table(["level", "verdicts", "from s", "to s", "timing turns s", "other phases s"],
                        [[r["level"], r["verdicts"], r["from_s"], r["to_s"], r["timing_turns_s"], r["other_phases_s"]]
                         for r in s["levels"]]) + [""]
    lines += [f"Top {SHOWN} problems by wall_s:", ""]
    return lines + _table(["problem", "verdict", "wall s", "largest phases (s)"],
                          [[r["problem"], r["verdict"], f"{r['wall_s']:.1f}",
                            ", ".join(f"{p} {_f(t, '.1f')}" for p, t in r["top_phases"].items())]
                           for r in s["slowest"]]) + [""]


def render_markdown(summary: dict[str, Any]) -> str:
    lines = (_header(summary) + _verdict_lines(summary) + _memory_lines(summary) + _speedup_lines(summary)
             + _busy_lines(summary) + _time_lines(summary) + floor_lines(summary, _table))
    return "\n".join(lines).rstrip() + "\n"
