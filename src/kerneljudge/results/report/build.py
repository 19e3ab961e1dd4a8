"""One self-contained HTML report for one run or several side by side (`kerneljudge report`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from kerneljudge.core import atomic_file
from kerneljudge import __version__
from kerneljudge.results.report import assets, curves, tables
from kerneljudge.results.report.curves import BAND_BOOT, TABLE_BOOT
from kerneljudge.results.report.html import Markup, esc, json_for_script, page, tag
from kerneljudge.results.report.problems import details_section, floor_note, problem_table
from kerneljudge.results.runs import Run
from kerneljudge.results.report.sections import breakdown, compare_section, curve_figures, figure, speedup_figures

SOURCE_KB = 64


@dataclass(frozen=True)
class ReportSettings:
    n_boot: int = TABLE_BOOT          # resamples for the tables (as `kerneljudge score`)
    band_boot: int = BAND_BOOT        # resamples for the bands of the curves
    source_kb: int = SOURCE_KB        # each solution's source is cut after this many KiB
    with_source: bool = True
    title: str | None = None
    floor: Mapping[str, Any] | None = None    # a noise floor (results/noise_floor.py): speedups marked against it
    floor_file: str = ""                       # where it was read from, for the page


@dataclass(frozen=True)
class ReportResult:
    path: Path
    bytes: int
    figures: int
    rows: int


def _section(anchor: str, heading: str, *content: Any) -> Markup:
    return Markup(tag("h2", heading, id=anchor) + "".join(esc(c) for c in content))


def render(runs: Sequence[Run], baselines: Mapping[str, Mapping[str, float]],
           settings: ReportSettings) -> tuple[str, int]:
    """The page's HTML and its number of figures."""
    table_summaries = [curves.table_summary(r.rows, baselines, settings.n_boot) for r in runs]
    curve_summaries = [curves.curve_summary(r.rows, baselines, settings.band_boot) for r in runs]
    names = curves.baseline_names(curve_summaries)
    curve_figs = [f for name in names for f in curve_figures(runs, curve_summaries, name, settings.band_boot)]
    speed_figs = speedup_figures(runs, baselines)
    title = settings.title or "kerneljudge report: " + ", ".join(r.label for r in runs)
    nav = [("runs", "Runs"), ("scores", "Scores"), ("curves", "fast_p curves"), ("levels", "Levels"),
           ("speedups", "Speedups"), ("breakdown", "Verdicts and flags"), ("backends", "Backends")]
    body = [tag("h1", title),
            tag("p", f"kerneljudge {__version__}; "
                     f"generated {datetime.now(timezone.utc).isoformat(timespec='seconds')}; "
                     f"{sum(len(r.rows) for r in runs)} verdicts", class_="meta")]
    sections = [
        _section("runs", "Runs", tables.runs_table(runs)),
        _section("scores", "Scores", tag("p", f"fast_p averaged over problems, with {100 * 0.95:g}% bootstrap "
                                             f"intervals over problems ({settings.n_boot} resamples), as `kerneljudge "
                                             "score` reports them. The interval rule's rows count a speedup as "
                                             "faster at p >= 1 only where its own 95% interval lies above 1.",
                                             class_="meta"),
                 tables.left_out_note(runs, table_summaries) or "", tables.score_table(runs, table_summaries),
                 floor_note(runs, settings.floor, settings.floor_file) if settings.floor is not None else ""),
        _section("curves", "fast_p curves", *[figure(f) for f in curve_figs]),
        _section("levels", "Levels", tables.level_table(runs, table_summaries)),
        _section("speedups", "Speedups", *[figure(f) for f in speed_figs]),
        _section("breakdown", "Verdicts, flags, numerics", breakdown(runs)),
        _section("backends", "Backends", tag("p", "fast_p per backend, averaged over the problems that have a "
                                                  "judgeable verdict in that backend (no intervals).", class_="meta"),
                 tables.backend_table(runs)),
    ]
    generation = tables.generation_table(runs)
    if generation:
        nav.append(("generation", "Generation"))
        sections.append(_section("generation", "Generation", generation))
    compared: list[Any] = []
    if len(runs) > 1:
        markup, compared = compare_section(runs, baselines, settings.n_boot)
        nav.append(("compare", "Comparison"))
        sections.append(_section("compare", "Comparison", markup))
    nav += [("problems-section", "Problems"), ("details", "Details")]
    sections.append(_section("problems-section", "Problems", problem_table(runs, settings.with_source,
                                                                           settings.floor)))
    sections.append(_section("details", "Verdict details",
                             details_section(runs, settings.source_kb * 1024, settings.with_source, settings.floor)))
    body.append(tag("nav", Markup(" ".join(tag("a", label, href=f"#{a}") for a, label in nav))))
    body += sections
    data = {"runs": [{"label": r.label, "source": str(r.source), "summary": s} for r, s in zip(runs, table_summaries)],
            "compare": compared}
    body.append(tag("script", json_for_script(data), type="application/json", id="kj-data"))
    html = page(title, Markup("\n".join(body)), assets.CSS, assets.SCRIPT)
    return html, html.count('class="plot"')  # untrusted text is escaped, so only our <img> tags match


def write_report(runs: Sequence[Run], out: str | os.PathLike,
                 baselines: Mapping[str, Mapping[str, float]] | None = None,
                 settings: ReportSettings = ReportSettings()) -> ReportResult:
    """Render and write the report through a temporary file (a reader never sees half a page)."""
    text, n_figs = render(runs, dict(baselines or {}), settings)
    path = Path(out)
    atomic_file.write_text(path, text)
    return ReportResult(path, len(text.encode("utf-8")), n_figs, sum(len(r.rows) for r in runs))
