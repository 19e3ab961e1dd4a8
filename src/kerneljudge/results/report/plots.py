"""The report's figures: matplotlib (Agg) drawn to SVG and handed back as data: URIs for <img> tags.

An SVG shown through <img> is a separate, script-less image document, so the page's content security
policy needs only `img-src data:` for it. Text in the figures is drawn as paths (no fonts to load).
Labels may come from run folder names: '$' is escaped so matplotlib never reads them as math.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from kerneljudge.core.extras import require
from kerneljudge.results.report.curves import P_MAX, Curve

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
          "#bcbd22")
_RC = {"svg.fonttype": "path", "svg.hashsalt": "kerneljudge", "font.size": 9, "axes.spines.top": False,
       "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 100,
       "figure.constrained_layout.use": True}


@dataclass(frozen=True)
class Figure:
    title: str
    caption: str
    uri: str                         # data:image/svg+xml;base64,...


def _plt():
    matplotlib = require("matplotlib", "report", "kerneljudge report")
    matplotlib.use("Agg", force=True)
    return require("matplotlib.pyplot", "report", "kerneljudge report")


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def safe(label: str) -> str:
    """A label matplotlib prints as it is (no mathtext)."""
    return str(label).replace("$", r"\$")


def _finish(plt, fig, title: str, caption: str) -> Figure:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})  # constrained layout: one draw, not two
    plt.close(fig)
    data = base64.b64encode(buf.getvalue().encode("utf-8")).decode("ascii")
    return Figure(title, caption, "data:image/svg+xml;base64," + data)


def _curve_axes(ax, curves: Sequence[tuple[int, Curve]], title: str) -> None:
    for i, c in curves:
        # fast_p holds from one grid point to the next (speedups strictly above p): steps, not slopes
        ax.step(c.p, c.value, where="post", color=color(i), lw=1.6, label=safe(c.label))
        if c.low is not None and c.high is not None:
            ax.fill_between(c.p, c.low, c.high, step="post", color=color(i), alpha=0.18, lw=0)
    ax.axvline(1.0, color="#444", lw=0.8, ls=":")
    ax.set_xlim(0, P_MAX)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fast_p")
    ax.set_title(safe(title), fontsize=9)


def fast_p_figure(title: str, caption: str, curves: Sequence[tuple[int, Curve]]) -> Figure:
    """fast_p over p, one line (and band) per (color index, curve)."""
    plt = _plt()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7, 3.8))
        _curve_axes(ax, curves, title)
        if curves:
            ax.legend(loc="upper right", fontsize=8)
        return _finish(plt, fig, title, caption)


def fast_p_grid(title: str, caption: str, panels: Mapping[str, Sequence[tuple[int, Curve]]]) -> Figure:
    """Small multiples: one panel per key (a level), lines per run."""
    plt = _plt()
    n = max(1, len(panels))
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(rows, cols, figsize=(3.9 * cols, 3.0 * rows), squeeze=False)
        for ax, (name, curves) in zip(axes.flat, panels.items()):
            _curve_axes(ax, curves, name)
            if curves:
                ax.legend(loc="upper right", fontsize=7)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        return _finish(plt, fig, title, caption)


def speedup_figure(title: str, caption: str, series: Sequence[tuple[int, str, Sequence[float]]]) -> Figure:
    """Histogram of speedups on a log axis, one outline per (color index, label, speedups)."""
    plt = _plt()
    values = [s for _, _, xs in series for s in xs if s > 0 and math.isfinite(s)]
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7, 3.4))
        if values:
            lo = math.floor(math.log2(min(values)) * 2) / 2
            hi = math.ceil(math.log2(max(values)) * 2) / 2
            hi = max(hi, lo + 0.5)
            edges = [2 ** (lo + 0.25 * k) for k in range(int((hi - lo) / 0.25) + 1)]
            for i, label, xs in series:
                xs = [x for x in xs if x > 0 and math.isfinite(x)]
                if xs:
                    ax.hist(xs, bins=edges, histtype="step", lw=1.6, color=color(i),
                            label=f"{safe(label)} (n={len(xs)})")
            ax.set_xscale("log", base=2)
            ax.axvline(1.0, color="#444", lw=0.8, ls=":")
            ax.legend(loc="upper right", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no accepted, timed solutions", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel("speedup (log scale; 1 = as fast as the baseline)")
        ax.set_ylabel("solutions")
        ax.set_title(safe(title), fontsize=9)
        return _finish(plt, fig, title, caption)


def bars_figure(title: str, caption: str, categories: Sequence[str],
                series: Sequence[tuple[int, str, Mapping[str, int]]], xlabel: str = "rows") -> Figure:
    """Grouped horizontal bars: one group per category, one bar per (color index, label, counts)."""
    plt = _plt()
    cats = list(categories) or ["(none)"]
    k = max(1, len(series))
    height = 0.8 / k
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7, 0.9 + 0.32 * len(cats) * max(1, k * 0.7)))
        for j, (i, label, counts) in enumerate(series):
            ys = [c + (j - (k - 1) / 2) * height for c in range(len(cats))]
            ax.barh(ys, [counts.get(c, 0) for c in cats], height=height, color=color(i), label=safe(label))
        ax.set_yticks(range(len(cats)))
        ax.set_yticklabels([safe(c) for c in cats])
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(safe(title), fontsize=9)
        if len(series) > 1:
            ax.legend(loc="lower right", fontsize=8)
        return _finish(plt, fig, title, caption)


def turn_figure(title: str, caption: str, curves: Sequence[Curve]) -> Figure:
    return fast_p_figure(title, caption, [(i, c) for i, c in enumerate(curves)])

