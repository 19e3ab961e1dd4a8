"""Report sections made of figures: fast_p curves (overall, per level, per turn), speedups, verdicts,
flags and numerics classes; and the comparison of runs. Plain data in, Markup out."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kerneljudge.results import verdict_rows
from kerneljudge.results.compare import ci_str, compare, left_out_lines
from kerneljudge.results.report import plots
from kerneljudge.results.report.curves import curve_of, levels_of, turn_curves
from kerneljudge.results.report.html import Markup, esc, table, tag
from kerneljudge.results.runs import Run
from kerneljudge.results.report.tables import (
    VERDICT_ORDER, count_table, flag_counts, flag_notes, numerics_counts, ordered, verdict_counts,
)

TOP_FLAGS = 20


def figure(f: plots.Figure) -> Markup:
    return tag("figure", Markup(tag("img", src=f.uri, alt=f.title, class_="plot") + tag("figcaption", f.caption)))


def _band_note(n_boot: int) -> str:
    return (f"Bands: 95% percentile bootstrap over problems ({n_boot} resamples, score.summary); "
            if n_boot else "No bands (--band-boot 0); ")


def curve_figures(runs: Sequence[Run], curves: Sequence[Mapping[str, Any]], baseline: str,
                  n_boot: int) -> list[plots.Figure]:
    """fast_p over p against one baseline: all runs together, then per level, then per turn for each run
    with refinement turns."""
    figs = []
    present = [(i, run, s["baselines"][baseline]) for i, (run, s) in enumerate(zip(runs, curves))
               if baseline in s.get("baselines", {})]
    note = _band_note(n_boot) + "fast_p: accepted and faster than p times the baseline, averaged over problems."
    figs.append(plots.fast_p_figure(f"fast_p against {baseline}", note,
                                    [(i, curve_of(block, run.label)) for i, run, block in present]))
    levels = levels_of(curves, baseline)
    if len(levels) > 1:
        panels = {f"level {lvl}": [(i, curve_of(block["by_level"][lvl], run.label)) for i, run, block in present
                                   if lvl in block.get("by_level", {})] for lvl in levels}
        figs.append(plots.fast_p_grid(f"fast_p against {baseline}, per level", note, panels))
    for i, run, block in present:
        turns = turn_curves(block)
        if len(turns) > 1:
            figs.append(plots.turn_figure(
                f"{run.label}: fast_p against {baseline} by refinement turn",
                "Best so far: a trajectory counts at turn t when any of its turns up to t qualifies (no bands).",
                turns))
    return figs


def speedup_figures(runs: Sequence[Run], baselines: Mapping[str, Mapping[str, float]]) -> list[plots.Figure]:
    figs = []
    for name, table_ms in {"eager": None, **dict(baselines)}.items():
        series = [(i, run.label, [s for v in run.rows if v.get("accepted")
                                  for s in [verdict_rows.speedup_of(v, table_ms)] if s is not None])
                  for i, run in enumerate(runs)]
        figs.append(plots.speedup_figure(
            f"speedup of accepted solutions against {name}",
            "Every accepted, timed verdict (all samples and turns); bins of a quarter power of two.", series))
    return figs


def breakdown(runs: Sequence[Run]) -> Markup:
    """Verdicts, flags and numerics classes: a figure and a table each (numerics only where recorded)."""
    out = []
    verdicts = [(run.label, verdict_counts(run), len(run.rows)) for run in runs]
    cats = ordered({c for _, t, _ in verdicts for c in t}, VERDICT_ORDER)
    out += [tag("h3", "verdicts"),
            figure(plots.bars_figure("verdicts", "'correct (held)': correct, but a blocking flag keeps it out of "
                                     "fast_p. 'unjudgeable': the problem's reference could not judge; left out of "
                                     "every score.", cats, [(i, lbl, t) for i, (lbl, t, _) in enumerate(verdicts)])),
            count_table("verdict", cats, verdicts)]
    flags = [(run.label, flag_counts(run), len(run.rows)) for run in runs]
    all_flags = sorted({f for _, t, _ in flags for f in t}, key=lambda f: (-sum(t.get(f, 0) for _, t, _ in flags), f))
    out.append(tag("h3", "flags"))
    if all_flags:
        out += [figure(plots.bars_figure(f"flags (the {min(TOP_FLAGS, len(all_flags))} most frequent)",
                                         "Rows carrying each flag; policy:* flags are static-analysis rejections.",
                                         all_flags[:TOP_FLAGS], [(i, lbl, t) for i, (lbl, t, _) in enumerate(flags)])),
                count_table("flag", all_flags, flags, flag_notes(all_flags))]
    else:
        out.append(tag("p", "No verdict carries a flag."))
    numerics = [(i, run.label, numerics_counts(run), len(run.rows)) for i, run in enumerate(runs)]
    numerics = [n for n in numerics if n[2]]  # runs whose verdicts carry no numerics are left out
    classes = ordered({c for _, _, t, _ in numerics for c in t}, ("exact", "fp32", "tf32", "bf16", "fp16", "wrong"))
    if classes:
        without = [run.label for run in runs if run.label not in {lbl for _, lbl, _, _ in numerics}]
        out += [tag("h3", "numerics classes"),
                figure(plots.bars_figure("numerics classes", "The finest precision class each output matched "
                                         "(verdicts that carry numerics)." +
                                         (f" No numerics recorded in: {', '.join(without)}." if without else ""),
                                         classes, [(i, lbl, t) for i, lbl, t, _ in numerics])),
                count_table("class", classes, [(lbl, t, n) for _, lbl, t, n in numerics])]
    return Markup("".join(out))


def compare_section(runs: Sequence[Run], baselines: Mapping[str, Mapping[str, float]],
                    n_boot: int) -> tuple[Markup, list]:
    """Each run after the first against the first (results/compare.py), as tables; and the raw results."""
    parts, results = [], []
    base = runs[0]
    for other in runs[1:]:
        c = compare(base.rows, other.rows, baselines=baselines, n_boot=n_boot, labels=(base.label, other.label))
        results.append(c)
        p = c["problems"]
        parts.append(tag("h3", f"B = {other.label} against A = {base.label}"))
        parts.append(tag("p", f"{p['shared']} shared problems (only in A: {p['only_a']}, only in B: {p['only_b']}); "
                              f"{100 * c['confidence']:g}% bootstrap intervals over the shared problems, pairs kept "
                              f"together, {c['n_boot']} resamples.", class_="meta"))
        for w in c["warnings"]:
            parts.append(tag("p", f"warning: {w}", class_="note"))
        for line in left_out_lines(c):
            parts.append(tag("p", line, class_="note"))
        rows = []
        for name, block in c["baselines"].items():
            for k, e in block["fast_p"].items():
                rows.append([name, k, ci_str(e["a"]), ci_str(e["b"]), ci_str(e["diff"], signed=True),
                             f"{e['b_better']} / {e['a_better']}"])
            g = block["geomean_speedup"]
            rows.append([name, f"geomean speedup ({g['problems']} problems)", ci_str(g["a"], suffix="x"),
                         ci_str(g["b"], suffix="x"), "B/A " + ci_str(g["ratio"], suffix="x"),
                         f"{g['b_faster']} / {g['a_faster']}"])
        parts.append(table(["against", "measure", "A", "B", "B - A", "B better / A better"], rows))
    return Markup("".join(esc(x) for x in parts)), results

