"""The report's summary tables: runs, scores with intervals (from score.summary), levels, backends,
verdicts, flags, numerics classes. Each function returns escaped Markup."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Optional, Sequence

from kerneljudge.results import trajectory_scores, verdict_rows
from kerneljudge.generate.runfolder import generation_totals
from kerneljudge.core.types import BLOCKING_FLAGS
from kerneljudge.results.report.curves import TABLE_P, key
from kerneljudge.results.report.html import Cell, Markup, table, tag
from kerneljudge.results.runs import Run

VERDICT_ORDER = ("correct", "correct (held)", "wrong_output", "build_error", "runtime_error", "timeout", "rejected",
                 "no_code", "unjudgeable")


def ci_text(entry: Optional[Mapping[str, Any]], digits: int = 2) -> Cell:
    """'value [low, high]' for a {value, ci} entry of score.summary."""
    if not entry or entry.get("value") is None:
        return Cell("-")
    value = float(entry["value"])
    ci = entry.get("ci")
    text = f"{value:.{digits}f}" + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")
    return Cell(text, value)


def verdict_label(v: Mapping[str, Any]) -> str:
    """The verdict, with a correct but not accepted row (a blocking flag) shown as 'correct (held)'."""
    verdict = str(v.get("verdict", "?"))
    return "correct (held)" if verdict == "correct" and not v.get("accepted") else verdict


def _distinct(rows: Iterable[Mapping[str, Any]], field: str) -> str:
    values = sorted({str(r[field]) for r in rows if r.get(field) not in (None, "")})
    return ", ".join(values[:4]) + (" ..." if len(values) > 4 else "") if values else "-"


def runs_table(runs: Sequence[Run]) -> Markup:
    rows = []
    for run in runs:
        model = (run.config or {}).get("model")
        rows.append([run.label, str(run.source), "bench run folder" if run.is_folder else "JSONL log", len(run.rows),
                     len({verdict_rows.problem_of(v) for v in run.rows}), model or _distinct(run.rows, "model"),
                     _distinct(run.rows, "device_name"), _distinct(run.rows, "precision"),
                     _distinct(run.rows, "policy"), _distinct(run.rows, "preset"), run.dropped])
    return table(["run", "source", "kind", "verdicts", "problems", "model", "device", "precision", "policy",
                  "preset", "repeats ignored"], rows)


def score_table(runs: Sequence[Run], summaries: Sequence[Mapping[str, Any]]) -> Markup:
    """fast_p at score's thresholds and the geometric-mean speedup, per run and baseline."""
    rows = []
    for run, s in zip(runs, summaries):
        for name, block in s.get("baselines", {}).items():
            geo = block.get("geomean_speedup", {})
            rows.append([run.label, name, block.get("problems", 0)]
                        + [ci_text(block["fast_p"].get(key(p))) for p in TABLE_P]
                        + [ci_text(geo), geo.get("n", 0)])
            if "fast_p_interval_rule" in block:   # speedup_interval.py: an interval that includes 1 is not faster
                rows.append([run.label, f"{name}, interval rule", block.get("problems", 0)]
                            + [ci_text(block["fast_p_interval_rule"].get(key(p))) for p in TABLE_P] + ["", ""])
    return table(["run", "against", "problems"] + [key(p) for p in TABLE_P] + ["geomean speedup", "n timed"], rows)


def level_table(runs: Sequence[Run], summaries: Sequence[Mapping[str, Any]]) -> Markup:
    shown = (0.0, 1.0, 2.0)
    rows = []
    for run, s in zip(runs, summaries):
        for name, block in s.get("baselines", {}).items():
            for level, b in block.get("by_level", {}).items():
                rows.append([run.label, name, level, b.get("problems", 0)]
                            + [ci_text(b["fast_p"].get(key(p))) for p in shown] + [ci_text(b.get("geomean_speedup"))])
    return table(["run", "against", "level", "problems"] + [key(p) for p in shown] + ["geomean speedup"], rows)


def left_out_note(runs: Sequence[Run], summaries: Sequence[Mapping[str, Any]]) -> Optional[Markup]:
    """Per run, the unjudgeable rows (and problems with no other row) that no score counts; None when none."""
    lines = [f"{run.label}: {verdict_rows.left_out_line(s['left_out'])}" for run, s in zip(runs, summaries)
             if (s.get("left_out") or {}).get("rows")]
    if not lines:
        return None
    return tag("p", "Verdict unjudgeable: the problem's reference could not judge (a degenerate reference output, or "
                    "the reference failed to run), so the solution is neither right nor wrong. " + " ".join(lines),
               class_="note")


def backend_table(runs: Sequence[Run]) -> Markup:
    """Per backend: counts, fast_p (trajectory_scores.fast_p_avg over that backend's judgeable rows) and geomean
    speedup."""
    rows = []
    for run in runs:
        by_backend: dict[str, list[dict[str, Any]]] = {}
        for v in run.rows:
            by_backend.setdefault(str(v.get("backend") or "-"), []).append(v)
        for backend in sorted(by_backend):
            vs = by_backend[backend]
            geo = trajectory_scores.geomean_speedup(vs)
            rows.append([run.label, backend, len(vs), len({verdict_rows.problem_of(v) for v in vs}),
                         sum(v.get("verdict") == "correct" for v in vs), sum(bool(v.get("accepted")) for v in vs),
                         sum(verdict_rows.is_unjudgeable(v) for v in vs)]
                        + [Cell(f"{trajectory_scores.fast_p_avg(vs, p):.2f}", trajectory_scores.fast_p_avg(vs, p))
                           for p in (0.0, 1.0, 2.0)]
                        + [Cell("-" if geo is None else f"{geo:.2f}", geo)])
    return table(["run", "backend", "verdicts", "problems", "correct", "accepted", "unjudgeable", "fast_0", "fast_1",
                  "fast_2", "geomean speedup"], rows)


def count_table(title: str, categories: Sequence[str], counts: Sequence[tuple[str, Mapping[str, int], int]],
                extra: Optional[Mapping[str, str]] = None) -> Markup:
    """Rows: categories; columns: count (and share of the run's rows) per run."""
    headers = [title] + (["note"] if extra else []) + [label for label, _, _ in counts]
    rows = []
    for c in categories:
        cells: list[Any] = [c] + ([extra.get(c, "")] if extra else [])
        for _, tally, total in counts:
            n = tally.get(c, 0)
            cells.append(Cell(f"{n} ({100 * n / total:.0f}%)" if total else str(n), float(n)))
        rows.append(cells)
    return table(headers, rows)


def verdict_counts(run: Run) -> Counter:
    return Counter(verdict_label(v) for v in run.rows)


def flag_counts(run: Run) -> Counter:
    return Counter(str(f) for v in run.rows for f in set(v.get("flags") or []))


def numerics_counts(run: Run) -> Counter:
    return Counter(str((v.get("numerics") or {}).get("class")) for v in run.rows
                   if isinstance(v.get("numerics"), Mapping) and (v["numerics"]).get("class"))


def ordered(categories: Iterable[str], order: Sequence[str] = ()) -> list[str]:
    cats = set(categories)
    return [c for c in order if c in cats] + sorted(cats - set(order))


def flag_notes(flags: Iterable[str]) -> dict[str, str]:
    return {f: "blocks acceptance" if f in BLOCKING_FLAGS else ("static analysis" if f.startswith("policy:") else "")
            for f in flags}


def generation_table(runs: Sequence[Run]) -> Optional[Markup]:
    rows = []
    for run in runs:
        g = generation_totals(run.rows)
        if g["replies"]:
            cost = "-" if g["cost_usd"] is None else f"${g['cost_usd']:.4f}"
            rows.append([run.label, g["replies"], g["no_code"], g["truncated"], g["prompt_tokens"],
                         g["completion_tokens"], cost])
    if not rows:
        return None
    return table(["run", "replies", "without code", "cut at max tokens", "prompt tokens", "completion tokens",
                  "cost"], rows)
