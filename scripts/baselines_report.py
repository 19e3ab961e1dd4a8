"""Turn the lines of scripts/baselines.py into the packaged baselines and a markdown summary.

    python scripts/baselines_report.py RAW.jsonl [RAW2.jsonl ...] [--package | --data FILE] [--md FILE]
        [--device cuda] [--preset default] [--precision fp32] [--no-sol | --sol-json FILE] [--force]

--package writes src/kerneljudge/data/suite/baselines_h200.json (--data FILE: another file) with, per
problem id, eager_ms, compile_ms, peak_mem_bytes, sol_ms, sol_fraction (sol_ms / eager_ms) and more, under
a header with the GPU, driver, versions, dates and commands; `kerneljudge score RUN --baseline compile`
reads the packaged one. --md gets the summary for docs/evidence/ (stdout without --md): counts, the problems
outside the 0.5-50 ms and 6 GB size bars, the geometric-mean compile/eager ratio and the distribution of
speed-of-light fractions.

The speed-of-light time of each problem is counted here (the `kerneljudge suite` numbers: FLOPs and bytes
at the default size, counted on the meta device, no GPU needed, cached) with the H200 ceilings packaged
now, so install measured ceilings (scripts/ceilings.py --install) first. --sol-json takes the output of
`kerneljudge suite --json` instead; --no-sol leaves the fractions out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kerneljudge.suite import baselines as B
from kerneljudge.suite.baseline_runner import read_rows


def _sol_rows(pids: list[str], args) -> dict[str, dict]:
    from kerneljudge.judging import roofline
    from kerneljudge.suite.catalog import list_problems

    if args.sol_json:
        rows = {}
        for line in Path(args.sol_json).read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            rows[row.get("problem")] = row
        return rows
    known = {p.id: p for p in list_problems(None, messages=sys.stderr)}
    chosen = [known[pid] for pid in pids if pid in known]
    missing = [pid for pid in pids if pid not in known]
    if missing:
        print(f"baselines_report: no local problem file for {len(missing)} id(s) (e.g. {missing[0]}): no SOL for "
              "them", file=sys.stderr)
    print(f"baselines_report: counting FLOPs and bytes of {len(chosen)} problem(s) (cached after the first time)",
          file=sys.stderr)
    rows = roofline.sol_many(chosen, roofline.H200, args.precision, args.timeout, args.cache_dir, progress=sys.stderr)
    return {r["problem"]: r for r in rows}


def _suite_sha() -> dict[str, str]:
    from kerneljudge.suite.catalog import list_problems

    return {p.id: p.sha256 for p in list_problems(None, messages=None)}


def _ceilings() -> dict:
    from kerneljudge.judging import roofline

    return {k: {"value": getattr(roofline.H200, k), "source": roofline.H200.source.get(k)}
            for k in roofline.CEILING_FIELDS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", nargs="+", help="JSONL files written by scripts/baselines.py")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--package", action="store_true",
                       help="write the packaged baselines (src/kerneljudge/data/suite/baselines_h200.json)")
    where.add_argument("--data", default=None, help="write the data file here instead")
    parser.add_argument("--md", default=None,
                        help="markdown summary to write (e.g. docs/evidence/DATE-h200-baselines.md)")
    parser.add_argument("--title", default=None, help="heading of the summary")
    parser.add_argument("--device", default="cuda", help="rows of this device (default cuda)")
    parser.add_argument("--preset", default="default", help="rows of this preset (default: default)")
    parser.add_argument("--precision", default="fp32", help="rows of this precision (default fp32)")
    parser.add_argument("--no-sol", action="store_true", help="leave out speed-of-light times and fractions")
    parser.add_argument("--sol-json", default=None, help="`kerneljudge suite --json` output to take SOL from")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to count one problem (SOL)")
    parser.add_argument("--cache-dir", default=None, help="cache folder for the SOL counts")
    parser.add_argument("--force", action="store_true",
                        help="write the packaged file even from rows that are not from an H200 at the default preset")
    args = parser.parse_args(argv)

    rows = []
    for f in args.raw:
        if not Path(f).exists():
            print(f"baselines_report: {f} does not exist", file=sys.stderr)
            return 3
        rows += read_rows(f)
    try:
        rows = B.select_rows(rows, args.device, args.preset, args.precision)
    except B.BaselineError as exc:
        print(f"baselines_report: {exc}", file=sys.stderr)
        return 3
    pids = sorted({str(r.get("problem_id")) for r in rows})
    sol_rows = None
    if not args.no_sol and args.preset == "default":
        sol_rows = _sol_rows(pids, args)
    elif not args.no_sol:
        print("baselines_report: speed of light is defined at the default preset only; left out", file=sys.stderr)
    data = B.build_data(rows, sol_rows, _suite_sha(), _ceilings() if sol_rows is not None else None)

    if args.package or args.data:
        target = B.PACKAGED if args.package else Path(args.data)
        packaged = target.resolve() == B.PACKAGED.resolve()
        gpu = str(data["machine"].get("gpu", ""))
        if packaged and not args.force and ("h200" not in gpu.lower() or args.preset != "default"):
            print(f"baselines_report: refusing to package rows from {gpu or 'an unknown device'} at the "
                  f"{args.preset} preset as the H200 baselines (give --data FILE, or --force)", file=sys.stderr)
            return 3
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        print(f"baselines_report: wrote {target} ({len(data['problems'])} problems; {data['counts']})",
              file=sys.stderr)
    md = B.summary_markdown(data, args.title, raw_files=args.raw)
    if args.md:
        Path(args.md).parent.mkdir(parents=True, exist_ok=True)
        Path(args.md).write_text(md, encoding="utf-8")
        print(f"baselines_report: wrote {args.md}", file=sys.stderr)
    else:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
