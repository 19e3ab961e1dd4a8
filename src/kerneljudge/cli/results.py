"""`kerneljudge report`, the registration of every results command (report, export, compare, import-hf), and the
--floor option that report and score share."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from kerneljudge.cli.options import ExitCode
from kerneljudge.core.extras import MissingExtra
from kerneljudge.results.baselines import BASELINE_HELP
from kerneljudge.results.report.build import SOURCE_KB, ReportSettings
from kerneljudge.results.report.curves import BAND_BOOT, TABLE_BOOT


FLOOR_HELP = ("a noise floor file (floor.json, written by scripts/upstream_sweep.py from identity copies): each "
              "accepted speedup is marked within noise when it lies inside its problem's identity-copy band for "
              "the clock it was timed on, else above or below it")


def _labels(text: str) -> list[str]:
    return [x.strip() for x in text.split(",")]


def add_floor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--floor", default=None, metavar="FILE", help=FLOOR_HELP)


def load_floor(path: str | None, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The --floor file (None without one), warning on stderr when it was measured on another device; raises
    ValueError for a file that is not a noise floor."""
    from kerneljudge.results.noise_floor import other_device_warning, read_floor

    if path is None:
        return None
    floor = read_floor(path)
    warning = other_device_warning(rows, floor)
    if warning:
        print(f"kerneljudge: {warning}", file=sys.stderr)
    return floor


def register(subparsers: Any) -> None:
    """Add report, export, compare and import-hf to an argparse subparsers object."""
    from kerneljudge.results import compare, export, hf_import

    p = subparsers.add_parser(
        "report", help="one self-contained HTML report of one or more runs (plots, tables, every verdict)",
        description="Writes one HTML file (no network needed to view it): fast_p curves with bootstrap bands "
                    "(overall, per level, per refinement turn, against eager and any --baseline), the speedup "
                    "distribution, verdicts, flags and numerics classes, per-level and per-backend tables, a "
                    "filterable, sortable table of every verdict linking to its details and the solution's "
                    "source; with two or more runs, side by side and compared with the first. Needs "
                    "pip install 'kerneljudge[report]'.")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="a bench run folder, or a verdicts JSONL file (run, examples)")
    p.add_argument("--out", default="report.html", metavar="FILE", help="the HTML file (default report.html; replaced)")
    p.add_argument("--baseline", action="append", default=[], metavar="[NAME=]FILE|compile|eager", help=BASELINE_HELP)
    p.add_argument("--labels", type=_labels, default=None, metavar="A,B,...",
                   help="names for the runs (default: folder or file names)")
    p.add_argument("--title", default=None, help="the page's title")
    p.add_argument("--n-boot", type=int, default=TABLE_BOOT,
                   help=f"bootstrap resamples for the tables (default {TABLE_BOOT}, as kerneljudge score)")
    p.add_argument("--band-boot", type=int, default=BAND_BOOT,
                   help=f"bootstrap resamples for the bands of the curves (default {BAND_BOOT}; 0: no bands)")
    p.add_argument("--source-kb", type=int, default=SOURCE_KB,
                   help=f"show at most this many KiB of each solution (default {SOURCE_KB})")
    p.add_argument("--no-source", action="store_true", help="leave the solutions' source out of the page")
    add_floor_option(p)
    p.set_defaults(func=cmd_report)
    export.register(subparsers)
    compare.register(subparsers)
    hf_import.register(subparsers)


def cmd_report(args: argparse.Namespace) -> int:
    from kerneljudge.results.baselines import load_baselines
    from kerneljudge.results.report.build import write_report
    from kerneljudge.results.runs import RunError, load_runs

    if args.n_boot < 0 or args.band_boot < 0 or args.source_kb < 1:
        print("kerneljudge: --n-boot and --band-boot must be at least 0, --source-kb at least 1", file=sys.stderr)
        return ExitCode.USAGE
    started = time.monotonic()
    try:
        runs = load_runs(args.runs, args.labels)
        baselines = load_baselines(args.baseline, [v for r in runs for v in r.rows])
        floor = load_floor(args.floor, [v for r in runs for v in r.rows])
    except (RunError, ValueError) as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    devices = {str(v.get("device_name") or "") for r in runs for v in r.rows}
    if not args.baseline and devices and all("H200" in d for d in devices):
        print("kerneljudge: judged on an H200: add --baseline compile for curves against the packaged torch.compile "
              "times (docs/baselines.md)", file=sys.stderr)
    for run in runs:
        if run.dropped:
            print(f"kerneljudge: {run.label}: {run.dropped} repeated row(s) for the same (problem, sample, turn) "
                  "ignored", file=sys.stderr)
    settings = ReportSettings(n_boot=args.n_boot, band_boot=args.band_boot, source_kb=args.source_kb,
                              with_source=not args.no_source, title=args.title, floor=floor,
                              floor_file=args.floor or "")
    try:
        result = write_report(runs, args.out, baselines, settings)
    except MissingExtra as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    print(f"report: {result.rows} verdict(s) of {len(runs)} run(s), {result.figures} figure(s), "
          f"{result.bytes / 1e6:.1f} MB -> {result.path} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return ExitCode.OK
