"""Command line: judge solutions (eval, run, examples), check the suite (lint, suite), drive models (bench, score).

Exit codes: 0 whenever a verdict was reached (even a wrong or crashing solution); 2 for bad usage;
3 for unreadable or unusable input files; 4 when --require-sandbox was given and the box is incomplete.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kerneljudge.results import text_tables as report
from kerneljudge.core.paths import examples_root
from kerneljudge.core.problem import ProblemError, read_problem
from kerneljudge.cli.generate import register as register_generation  # bench, score
from kerneljudge.cli.options import ExitCode, add_judge_options, judge_options
from kerneljudge.cli.results import register as register_results  # report, export, compare, import-hf
from kerneljudge.cli.serve import register as register_serve  # serve
from kerneljudge.cli.env_serve import register as register_env_serve  # env-serve
from kerneljudge.cli.shapes import register as register_shapes  # shapes
from kerneljudge.cli.suite import register as register_suite  # lint, suite

def cmd_eval(args: argparse.Namespace) -> int:
    from kerneljudge.api import judge

    for label, path in (("problem", args.problem), ("solution", args.solution)):
        if not Path(path).is_file():
            print(f"kerneljudge: {label} file {path} does not exist", file=sys.stderr)
            return ExitCode.INPUT
    try:
        problem = read_problem(args.problem)
        verdict = judge(problem, args.solution, judge_options(args))
    except ProblemError as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    except (OSError, UnicodeDecodeError) as exc:
        print(f"kerneljudge: cannot read {args.solution}: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    if args.json:
        print(verdict.to_json())
    else:
        print(report.verdict_table([verdict.to_dict()]))
        print(f"\n{verdict.verdict}: {verdict.reason}")
        if verdict.problem_outcome:     # unjudgeable: the problem, not the solution, decided it
            print(report.problem_outcome_text(verdict.problem_outcome))
        if verdict.error_excerpt and verdict.verdict != "correct":
            print("\n" + verdict.error_excerpt[-1500:])
    return 0


def _run_folder(problems_dir: Path, solutions_dir: Path, out: Path, args: argparse.Namespace) -> int:
    from kerneljudge.judging.batch import Job, run_batch
    from kerneljudge.core.mapping import find_problems, pair_solutions

    try:
        problems = find_problems(problems_dir)
        pairs, unmatched = pair_solutions(solutions_dir, problems)
    except ProblemError as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    for path in unmatched:
        print(f"skipped {path.name}: no problem in {problems_dir} matches its name", file=sys.stderr)
    if not pairs:
        print(f"kerneljudge: no solution in {solutions_dir} maps to a problem in {problems_dir}", file=sys.stderr)
        return ExitCode.INPUT
    options = judge_options(args)
    jobs = [Job(p, s) for p, s in pairs]
    if getattr(args, "backends", None):
        from kerneljudge.analysis import detect_backend

        jobs = [j for j in jobs if detect_backend(j.solution.read_text()) in args.backends]
    print(f"judging {len(jobs)} solution(s) of {len({j.problem.id for j in jobs})} problem(s); log: {out}",
          file=sys.stderr)
    from kerneljudge.core.progress import Progress

    with Progress(desc="judging", unit="solution") as progress:
        verdicts = run_batch(jobs, options, out, jobs_in_parallel=args.jobs, progress=progress.callback,
                             executor=getattr(args, "executor", "local"), address=getattr(args, "address", None))
    if args.json:
        for v in verdicts:
            print(json.dumps(v, sort_keys=True))
    else:
        print(report.verdict_table(verdicts))
        print()
        print(report.fast_p_line(verdicts))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    return _run_folder(Path(args.problems), Path(args.solutions), Path(args.out), args)


def cmd_examples(args: argparse.Namespace) -> int:
    from kerneljudge.judging.environment import resolve_device

    device = resolve_device(args.device)
    root = examples_root()
    args.backends = {"cpp", "triton"} if device == "cpu" else {"cuda", "triton"}
    args.device = device
    out = Path(args.out) if args.out else Path("kerneljudge-examples.jsonl")
    return _run_folder(root / "problems", root / "solutions", out, args)


def build_parser() -> argparse.ArgumentParser:
    from kerneljudge.judging.executors.base import add_executor_arguments

    parser = argparse.ArgumentParser(prog="kerneljudge", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="judge one solution against one problem")
    p.add_argument("--problem", required=True, help="problem .py (class Model, get_inputs, get_init_inputs)")
    p.add_argument("--solution", required=True, help="solution .py defining ModelNew")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout (logs on stderr)")
    add_judge_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("run", help="judge every solution in a folder whose file name maps to a problem",
                       description="Solution names map to problems as docs/formats.md says: "
                                   "level_{L}_problem_{P}_sample_{S}_kernel.py (upstream layout), or "
                                   "<problem stem>.py / <problem stem>__<tag>.py. Verdicts are appended to --out "
                                   "as JSON lines; re-running resumes where the last run stopped.")
    p.add_argument("--problems", required=True, help="folder of problem files (or with level*/ subfolders)")
    p.add_argument("--solutions", required=True, help="folder of solution files")
    p.add_argument("--out", required=True, help="JSONL run log (appended; existing verdicts are kept)")
    p.add_argument("--jobs", type=int, default=None,
                   help="solutions in flight at once (builds run in parallel; default: one per core on a GPU machine, "
                        "plus one per solution that compiles nothing, up to twice the cores as memory allows; "
                        "2 on the CPU)")
    p.add_argument("--json", action="store_true", help="print verdicts as JSON lines instead of a table")
    add_judge_options(p)
    add_executor_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("examples", help="judge the bundled example solutions on this machine (the main job)")
    p.add_argument("--out", default=None, help="JSONL run log (default ./kerneljudge-examples.jsonl)")
    p.add_argument("--jobs", type=int, default=None, help="solutions in flight at once")
    p.add_argument("--json", action="store_true", help="print verdicts as JSON lines instead of a table")
    add_judge_options(p)
    add_executor_arguments(p)
    p.set_defaults(func=cmd_examples)

    register_suite(sub)
    register_shapes(sub)
    register_generation(sub)
    register_results(sub)
    register_serve(sub)
    register_env_serve(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "trials", 1) < 1:
        parser.error("--trials must be at least 1")
    if (getattr(args, "reserved_cores", None) or 0) < 0:
        parser.error("--reserved-cores must be 0 or more")
    if getattr(args, "checks_at_once", None) is not None and args.checks_at_once < 1:
        parser.error("--checks-at-once must be at least 1")
    from kerneljudge.judging.boxing import SandboxRequired

    try:
        return args.func(args)
    except SandboxRequired as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.NO_SANDBOX
    except KeyboardInterrupt:
        print("kerneljudge: interrupted; verdicts reached so far are in the log", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
