"""Command-line subcommands for the bundled suite: `kerneljudge lint` and `kerneljudge suite`.

    kerneljudge lint --problem FILE [--preset small|default] [--json]
    kerneljudge lint --suite [--level N] [--json]
    kerneljudge suite [--level N] [--json] [--gpu h200] [--precision fp32|fp16|bf16]

Exit codes follow the main CLI: 0 when the work was done (even when a problem is degenerate), 2 for bad
usage, 3 for an unreadable problem file. Progress goes to stderr; stdout holds only the table or JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kerneljudge.cli.options import ExitCode
from kerneljudge.core.types import PRECISIONS


def register(subparsers: Any) -> None:
    """Add the `lint` and `suite` subcommands to an argparse subparsers object."""
    from kerneljudge.judging.roofline import GPUS

    p = subparsers.add_parser(
        "lint", help="check that problems are usable judging targets (runs the reference on the CPU)",
        description="Runs each reference in a child process on the CPU and checks that it is deterministic, "
                    "depends on its inputs and its init seed, is not an input passed through, is not matched "
                    "by a zero or constant output, leaves its inputs alone, and stays finite in fp32, fp16 "
                    "and bf16. Exit status 0 whenever linting finished, degenerate or not.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--problem", metavar="FILE", help="one problem file")
    which.add_argument("--suite", action="store_true", help="every problem of the bundled suite")
    p.add_argument("--level", type=int, default=None, help="with --suite: only this level")
    p.add_argument("--preset", choices=("small", "default"), default="small",
                   help="problem sizes (default small: the CPU preset)")
    p.add_argument("--json", action="store_true",
                   help="JSON on stdout: one object for --problem, one line per problem for --suite")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per problem (default 60)")
    p.add_argument("--cache-dir", default=None, help="cache folder (default ~/.cache/kerneljudge)")
    p.set_defaults(func=cmd_lint)

    p = subparsers.add_parser(
        "suite", help="list the bundled problems with FLOPs, bytes and their speed-of-light time",
        description="FLOPs of one forward (matmul/conv/attention, torch's flop counter) and the fewest bytes "
                    "that must move (inputs + parameters/buffers + outputs) at each problem's default size, "
                    "counted on the meta device in a child process; SOL time = max(FLOPs / peak, "
                    "bytes / bandwidth) on the chosen GPU.")
    p.add_argument("--level", type=int, default=None, help="only this level")
    p.add_argument("--json", action="store_true", help="one JSON object per problem per line")
    p.add_argument("--gpu", choices=sorted(GPUS), default="h200", help="GPU ceilings to use (default h200)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="run precision (fp32 means no TF32, as the judge runs it)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per problem (default 300)")
    p.add_argument("--no-cache", action="store_true", help="recount instead of using cached counts")
    p.add_argument("--cache-dir", default=None, help="cache folder (default ~/.cache/kerneljudge)")
    p.set_defaults(func=cmd_suite)


def _problems(level: int | None):
    from kerneljudge.suite.catalog import list_problems

    return list_problems(level)


def cmd_lint(args: argparse.Namespace) -> int:
    from kerneljudge.core.problem import ProblemError, read_problem
    from kerneljudge.judging.lint import lint_many, lint_problem

    if args.problem is not None:
        if args.level is not None:
            print("kerneljudge lint: --level goes with --suite, not --problem", file=sys.stderr)
            return ExitCode.USAGE
        if not Path(args.problem).is_file():
            print(f"kerneljudge: problem file {args.problem} does not exist", file=sys.stderr)
            return ExitCode.INPUT
        try:
            problem = read_problem(args.problem)
        except ProblemError as exc:
            print(f"kerneljudge: {exc}", file=sys.stderr)
            return ExitCode.INPUT
        result = lint_problem(problem, args.preset, args.timeout, args.cache_dir)
        if args.json:
            print(json.dumps(_lint_json(result), sort_keys=True))
        else:
            print(_lint_text(result))
        return ExitCode.OK

    problems = _problems(args.level)
    if not problems:
        print(f"kerneljudge: no bundled problems{'' if args.level is None else f' at level {args.level}'}",
              file=sys.stderr)
        return ExitCode.USAGE
    results = lint_many(problems, args.preset, args.timeout, args.cache_dir, progress=True)
    if args.json:
        for r in results:
            print(json.dumps(_lint_json(r), sort_keys=True))
    else:
        print(_lint_table(results))
    bad = sum(1 for r in results if r["degenerate"])
    print(f"linted {len(results)} problem(s): {len(results) - bad} clean, {bad} degenerate", file=sys.stderr)
    return ExitCode.OK


def _lint_json(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("problem", "degenerate", "reasons", "checks")}


def _lint_text(result: dict[str, Any]) -> str:
    checks = result["checks"]
    passed = sum(1 for v in checks.values() if v)
    head = (f"{result['problem']} ({result['preset']} preset, {result['seconds']:.2f} s): "
            f"{'DEGENERATE' if result['degenerate'] else 'clean'}; {passed}/{len(checks)} checks passed")
    lines = [head]
    lines += [f"  {name:<24} {'ok' if ok else 'FAIL'}" for name, ok in checks.items()]
    lines += [f"  skipped {s}" for s in result.get("skipped", [])]
    lines += [f"  reason: {r}" for r in result["reasons"]]
    return "\n".join(lines)


def _lint_table(results: list[dict[str, Any]]) -> str:
    width = max([len(r["problem"]) for r in results] + [7])
    lines = [f"{'problem':<{width}}  {'result':<10}  {'seconds':>7}  reasons", "-" * (width + 40)]
    for r in results:
        status = "DEGENERATE" if r["degenerate"] else "clean"
        lines.append(f"{r['problem']:<{width}}  {status:<10}  {r['seconds']:>7.2f}  {'; '.join(r['reasons'])}")
    return "\n".join(lines)


def cmd_suite(args: argparse.Namespace) -> int:
    from kerneljudge.judging.roofline import GPUS, sol_many

    problems = _problems(args.level)
    if not problems:
        print(f"kerneljudge: no bundled problems{'' if args.level is None else f' at level {args.level}'}",
              file=sys.stderr)
        return ExitCode.USAGE
    rows = sol_many(problems, GPUS[args.gpu], args.precision, args.timeout, args.cache_dir, progress=True,
                    use_cache=not args.no_cache)
    if args.json:
        keys = ("problem", "level", "category", "flops", "bytes", "intensity", "sol_ms", "bound_by", "gpu",
                "precision", "notes")
        for row in rows:
            print(json.dumps({k: row.get(k) for k in keys}, sort_keys=True))
    else:
        print(_suite_table(rows, GPUS[args.gpu].name, args.precision))
        spec = GPUS[args.gpu]
        sources = sorted(set(spec.source.values()))
        print(f"ceilings: {'; '.join(sources) if sources else 'unknown'} (docs/baselines.md)", file=sys.stderr)
    return ExitCode.OK


def _suite_table(rows: list[dict[str, Any]], gpu: str, precision: str) -> str:
    width = max([len(str(r["problem"])) for r in rows] + [7])
    cat = max([len(str(r["category"] or "")) for r in rows] + [8])
    head = (f"{'problem':<{width}}  {'level':>5}  {'category':<{cat}}  {'GFLOP':>10}  {'MB':>9}  "
            f"{'FLOP/B':>8}  {'SOL ms':>9}  bound")
    lines = [f"speed of light on {gpu} at {precision} (default sizes)", head, "-" * len(head)]
    for r in rows:
        flops = "?" if r["flops"] is None else f"{r['flops'] / 1e9:.2f}"
        nbytes = "?" if r["bytes"] is None else f"{r['bytes'] / 1e6:.1f}"
        intensity = "?" if r["intensity"] is None else f"{r['intensity']:.1f}"
        sol_ms = "?" if r["sol_ms"] is None else f"{r['sol_ms']:.4f}"
        bound = r["bound_by"] or "?"
        if r["flops"] is None:
            bound += " (flops unknown)"
        lines.append(f"{r['problem']:<{width}}  {r['level']:>5}  {str(r['category'] or ''):<{cat}}  {flops:>10}  "
                     f"{nbytes:>9}  {intensity:>8}  {sol_ms:>9}  {bound}")
    return "\n".join(lines)
