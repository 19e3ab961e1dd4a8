"""Upstream KernelBench identity sweep: the judge's noise floor on upstream's own problems.

    bash scripts/fetch_upstream.sh                         # once: upstream/KernelBench/level1..3 (git-ignored)
    python scripts/upstream_sweep.py --out sweep/          # on the H200: every problem of levels 1-3
    python scripts/upstream_sweep.py --levels 1 --limit 4 --device cpu --out /tmp/sweep-test   # CPU smoke test
    python scripts/upstream_sweep.py --hard 20 --out sweep-hard/                               # memory pressure
    python scripts/upstream_sweep.py --from-jsonl sweep/results.jsonl --out sweep/             # report again only

For every selected problem it writes an identity copy (the problem's own source with `class Model` renamed
`ModelNew`) to OUT/solutions/, judges them all with one `kerneljudge run` under the lenient policy (identity
copies call PyTorch, which strict rejects), and meanwhile samples the GPU's utilisation every 0.5 s and the
host's load every second. A perfect judge calls every copy correct with a speedup of exactly 1.0 under both
clocks, so the report (OUT/report.md and OUT/report.json) measures the judge's noise: the spread of the
copies' speedups, how many fast_1.05 and fast_1.1 would count as faster (false positives), the verdicts that
are not `correct`, where the judge's time went and how long the GPU sat idle; and the noise floor per problem,
written as OUT/floor.json for `kerneljudge score --floor` and `kerneljudge report --floor`.

--hard N judges only the N problems (of those --levels and --match select) whose judgements the judge expects to
need the most device memory, estimated on the meta device in a child process (memory_subset.py,
problem_memory.py; cached under the cache dir); --limit then keeps the first of them by level and number.

Beside it: identity_copy.py (the renaming), busy_sampler.py (the sampling), upstream_sweep_report.py (the
report, pure functions over verdict dicts; sweep_report_markdown.py writes it, sweep_floor_report.py its
noise-floor section), memory_subset.py (the --hard selection).

Files: OUT/solutions/ (the copies, named in upstream's run layout `level_{L}_problem_{P}_sample_0_kernel.py`,
which maps by level and number; `<stem>__<tag>.py` does not map upstream names that contain "__"),
OUT/results.jsonl (the run log), OUT/gpu_samples.csv, OUT/host_samples.csv, OUT/run.json, OUT/report.{md,json},
OUT/floor.json.
Running again with the same --out resumes: verdicts already in the log are kept and only the rest is judged
(--fresh starts over). Arguments after `--` go to `kerneljudge run` as they are (not --policy: always lenient).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

try:
    from kerneljudge.judging.batch import read_log
    from kerneljudge.core.mapping import find_problems, pair_solutions
    from kerneljudge.core.paths import default_cache_dir
    from kerneljudge.core.problem import Problem, ProblemError, sha256_text
    from kerneljudge.results.noise_floor import write_floor
except ImportError as exc:  # the script uses the installed package, never src/ directly
    sys.exit(f"upstream_sweep: kerneljudge is not importable here ({exc}); run `bash scripts/setup.sh` and "
             "`. .venv/bin/activate` first")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the modules beside this script
from busy_sampler import GpuSampler, HostSampler, read_samples, write_samples  # noqa: E402
from identity_copy import IdentityError, identity_source  # noqa: E402
import memory_subset  # noqa: E402
from sweep_report_markdown import render_markdown  # noqa: E402
from upstream_sweep_report import summarize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROBLEMS = ROOT / "upstream" / "KernelBench"
SOLUTION_NAME = re.compile(r"^level_\d+_problem_\d+_sample_\d+_kernel\.py$")
EXIT_INPUT = 3


def solution_name(problem: Problem) -> str:
    """Upstream's run layout: maps by level and number, whatever the problem's file name holds."""
    return f"level_{problem.level}_problem_{problem.number}_sample_0_kernel.py"


# ---------------------------------------------------------------------------------------------------------
# selecting and staging


def select_problems(problems_dir: Path, levels: list[int], limit: int | None, match: str | None) -> list[Problem]:
    """Problems of the given levels in (level, number) order, filtered by a regex on the id, then the first N."""
    pattern = re.compile(match) if match else None
    chosen = [p for p in find_problems(problems_dir) if p.level in levels and (not pattern or pattern.search(p.id))]
    chosen.sort(key=lambda p: (p.level, p.number if p.number is not None else 1 << 30, p.name))
    return chosen[:limit] if limit is not None else chosen


def unreadable_files(problems_dir: Path, levels: list[int], problems: list[Problem]) -> list[str]:
    """Files in the level folders that find_problems did not take as problems (mapping.find_problems skips
    them silently)."""
    taken = {Path(p.path).resolve() for p in problems}
    files = [f for level in levels for f in sorted((problems_dir / f"level{level}").glob("*.py"))]
    return [str(f.relative_to(problems_dir)) for f in files if f.resolve() not in taken and not f.name.startswith("_")]


def stage(problems: list[Problem], solutions_dir: Path) -> tuple[dict[str, Problem], list[dict[str, str]]]:
    """Write one identity copy per problem; remove copies of problems no longer selected, so `kerneljudge run`
    judges exactly this selection (their verdicts stay in the log). Returns {file name: problem} and the
    problems that could not be copied, with why."""
    solutions_dir.mkdir(parents=True, exist_ok=True)
    staged, not_staged = {}, []
    for problem in problems:
        if problem.number is None:
            not_staged.append({"problem": problem.id, "reason": "no number in its file name to map it by"})
            continue
        try:
            source = identity_source(Path(problem.path).read_text())
        except (IdentityError, OSError, UnicodeDecodeError) as exc:
            not_staged.append({"problem": problem.id, "reason": str(exc)})
            continue
        name = solution_name(problem)
        target = solutions_dir / name
        if not target.exists() or target.read_text() != source:
            target.write_text(source)
        staged[name] = problem
    for old in solutions_dir.glob("*.py"):
        if SOLUTION_NAME.match(old.name) and old.name not in staged:
            old.unlink()
    return staged, not_staged


def mapping_errors(problems_dir: Path, solutions_dir: Path, staged: dict[str, Problem]) -> list[str]:
    """Check with kerneljudge's own mapping that every copy maps to the problem it was made from."""
    pairs, unmatched = pair_solutions(solutions_dir, find_problems(problems_dir))
    errors = [f"{path.name} maps to no problem" for path in unmatched]
    for problem, path in pairs:
        wanted = staged.get(path.name)
        if wanted is None:
            errors.append(f"{path.name} is not one of this sweep's copies")
        elif Path(problem.path).resolve() != Path(wanted.path).resolve():
            errors.append(f"{path.name} maps to {problem.id}, not {wanted.id}")
    return errors


# ---------------------------------------------------------------------------------------------------------
# running the judge


def judge_command(args: argparse.Namespace, problems_dir: Path, solutions_dir: Path, log: Path) -> list[str]:
    command = [sys.executable, "-m", "kerneljudge", "run", "--problems", str(problems_dir),
               "--solutions", str(solutions_dir), "--out", str(log), "--policy", "lenient"]
    for flag, value in (("--jobs", args.jobs), ("--cache-dir", args.cache_dir), ("--device", args.device)):
        if value is not None:
            command += [flag, str(value)]
    return command + args.extra


GPU_FIELDS, HOST_FIELDS = ["t", "gpu", "util", "mem_mib"], ["t", "load1", "cpu_percent", "verdicts"]
SAMPLES_EVERY_S = 30.0   # how often the samples so far are written out while the judge runs


def run_judge(command: list[str], log: Path, out: Path | None = None) -> dict[str, Any]:
    """Run `kerneljudge run` (its progress and table pass through) with both samplers going; what happened. With
    `out`, the samples so far are written there every SAMPLES_EVERY_S, beside a run.json that names the log, so a
    run cut off (a device session that ends, a killed step) still leaves them for --from-jsonl; on the H100 a
    sweep cut off after 157 verdicts had kept none."""
    started_at, t0 = time.time(), time.monotonic()
    gpu, host = GpuSampler(t0, started_at), HostSampler(t0, log)
    gpu.start()
    host.start()
    done = threading.Event()
    writer = None
    if out is not None:
        (out / "run.json").write_text(json.dumps({"log": str(log), "started_at": started_at, "cut_off": True},
                                                 indent=1, sort_keys=True) + "\n")
        writer = threading.Thread(target=_write_samples_until, args=(done, out, gpu, host), daemon=True)
        writer.start()
    interrupted = False
    proc = subprocess.Popen(command)
    try:
        code = proc.wait()
    except KeyboardInterrupt:  # the judge got the same Ctrl-C; let it write what it has
        interrupted = True
        code = proc.wait()
    finally:
        wall = time.monotonic() - t0
        gpu.stop()
        host.stop()
        done.set()
        if writer is not None:
            writer.join(timeout=10)
    return {"started_at": started_at, "wall_s": round(wall, 2), "exit_code": code, "interrupted": interrupted,
            "gpu_sampler": gpu.status, "gpu_samples": gpu.samples, "host_samples": host.samples}


def _write_samples_until(done: threading.Event, out: Path, gpu: GpuSampler, host: HostSampler) -> None:
    while not done.wait(SAMPLES_EVERY_S):
        write_samples(out / "gpu_samples.csv", gpu.samples, GPU_FIELDS)
        write_samples(out / "host_samples.csv", host.samples, HOST_FIELDS)


def sweep_verdicts(rows: list[dict[str, Any]], staged: dict[str, Problem], solutions_dir: Path) -> list[dict[str, Any]]:
    """The log's verdicts on this sweep's copies (by problem and solution hash), the last one of each."""
    wanted = {(p.sha256, sha256_text((solutions_dir / name).read_text())) for name, p in staged.items()}
    latest = {}
    for row in rows:
        key = (row.get("problem_sha256"), row.get("solution_sha256"))
        if key in wanted:
            latest[key] = row
    return sorted(latest.values(), key=lambda v: v.get("problem_id", ""))


def latest_per_key(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every verdict of a log, the last one for each problem, solution and judging options (--from-jsonl)."""
    keys = ("problem_sha256", "solution_sha256", "device", "precision", "policy", "contract", "clock")
    latest = {tuple(str(row.get(k)) for k in keys): row for row in rows}
    return sorted(latest.values(), key=lambda v: v.get("problem_id", ""))


# ---------------------------------------------------------------------------------------------------------
# files


def write_report(out: Path, summary: dict[str, Any]) -> Path:
    (out / "report.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    write_floor(out / "floor.json", summary["floor"])
    markdown = out / "report.md"
    markdown.write_text(render_markdown(summary))
    return markdown


def previous_run(out: Path, log: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """run.json and the samples of the last sweep in OUT, if it judged into this same log."""
    record = out / "run.json"
    if not record.exists():
        return {}, [], []
    run = json.loads(record.read_text())
    if Path(run.get("log", "")).resolve() != log.resolve():
        return {}, [], []
    return run, read_samples(out / "gpu_samples.csv"), read_samples(out / "host_samples.csv")


# ---------------------------------------------------------------------------------------------------------
# command line


def split_extra(argv: list[str]) -> tuple[list[str], list[str]]:
    """(this script's arguments, the ones after `--` that go to kerneljudge run)."""
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def levels_arg(text: str) -> list[int]:
    try:
        levels = sorted({int(x) for x in re.split(r"[,\s]+", text.strip()) if x})
    except ValueError:
        raise argparse.ArgumentTypeError(f"levels are numbers such as 1,2,3, not {text!r}") from None
    if not levels:
        raise argparse.ArgumentTypeError("no level given")
    return levels


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="upstream_sweep.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n", 1)[0],
        epilog=__doc__.split("\n\n", 1)[1] + "\nThe report is rewritten from the log after every invocation.")
    parser.add_argument("--out", required=True, type=Path,
                        help="folder for the copies, the run log, the samples and the report (created)")
    parser.add_argument("--problems", type=Path, default=DEFAULT_PROBLEMS,
                        help=f"upstream problem folder with level1/ level2/ level3/ (default {DEFAULT_PROBLEMS}; "
                             "fill it with scripts/fetch_upstream.sh)")
    parser.add_argument("--levels", type=levels_arg, default=[1, 2, 3], help="levels to sweep, e.g. 1 or 1,2 "
                        "(default 1,2,3)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems (by level, number)")
    parser.add_argument("--match", default=None, help="only problems whose id (level1/19_ReLU) matches this regex")
    parser.add_argument("--hard", type=int, default=None, metavar="N",
                        help="only the N problems (of those selected) expected to need the most device memory, "
                             "estimated on the meta device (no GPU needed); applied before --limit")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default=None,
                        help="passed to kerneljudge run (default: its own, cuda if present; the CPU runs every "
                             "problem at a small preset)")
    parser.add_argument("--jobs", type=int, default=None, help="passed to kerneljudge run: solutions in flight")
    parser.add_argument("--cache-dir", default=None, help="passed to kerneljudge run: builds and reference times")
    parser.add_argument("--fresh", action="store_true",
                        help="delete OUT's run log, samples and report first (default: resume where the last run "
                             "in OUT stopped)")
    parser.add_argument("--from-jsonl", type=Path, default=None, metavar="FILE",
                        help="judge nothing: write the report from this run log (with OUT's samples if they "
                             "belong to it)")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    ours, extra = split_extra(argv)
    parser = build_parser()
    args = parser.parse_args(ours)
    if any(a == "--policy" or a.startswith("--policy=") for a in extra):
        parser.error("the sweep always judges with --policy lenient (strict rejects PyTorch in identity copies)")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if args.hard is not None and args.hard < 1:
        parser.error("--hard must be at least 1")
    if args.match:
        try:
            re.compile(args.match)
        except re.error as exc:
            parser.error(f"--match is not a valid regular expression: {exc}")
    args.extra = extra
    return args


def report_only(args: argparse.Namespace) -> int:
    log = args.from_jsonl
    if not log.is_file():
        print(f"upstream_sweep: run log {log} does not exist", file=sys.stderr)
        return EXIT_INPUT
    args.out.mkdir(parents=True, exist_ok=True)
    run, gpu, host = previous_run(args.out, log)
    run = dict(run, log=str(log), report_from_jsonl=True)
    path = write_report(args.out, summarize(latest_per_key(read_log(log)), gpu, host, run))
    print(f"report: {path}")
    return 0


def passed_option(extra: list[str], name: str) -> str | None:
    """The value of an option among the arguments for kerneljudge run (`--name V` or `--name=V`), else None."""
    for i, arg in enumerate(extra):
        if arg == name and i + 1 < len(extra):
            return extra[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def hardest_subset(problems: list[Problem], args: argparse.Namespace) -> tuple[list[Problem], dict[str, Any]]:
    """--hard N: the N problems with the largest estimated memory need, then --limit, in (level, number) order;
    prints them with their estimates. Returns them and what run.json records of the choice."""
    precision = passed_option(args.extra, "--precision") or "fp32"
    found = memory_subset.estimates(problems, precision, args.cache_dir or default_cache_dir())
    chosen = memory_subset.hardest(problems, args.hard, found)
    chosen.sort(key=lambda p: (p.level, p.number if p.number is not None else 1 << 30, p.name))
    chosen = chosen[:args.limit] if args.limit is not None else chosen
    print(f"upstream_sweep: --hard {args.hard}: the {len(chosen)} of {len(problems)} problems expected to need the "
          f"most device memory ({precision}; estimated on the meta device):", file=sys.stderr)
    print("\n".join(memory_subset.describe(chosen, found)), file=sys.stderr)
    failed = sorted(pid for pid, e in found.items() if "error" in e)
    if failed:
        print(f"upstream_sweep: no estimate for {len(failed)} problem(s), ranked last: {', '.join(failed[:5])}"
              + (" ..." if len(failed) > 5 else ""), file=sys.stderr)
    record = {"n": args.hard, "precision": precision, "need_bytes": {p.id: found[p.id].get("need_bytes")
                                                                     for p in chosen}, "no_estimate": failed}
    return chosen, record


def fresh_start(out: Path) -> None:
    for name in ("results.jsonl", "gpu_samples.csv", "host_samples.csv", "run.json", "report.md", "report.json",
                 "floor.json"):
        (out / name).unlink(missing_ok=True)


def sweep(args: argparse.Namespace, argv: list[str]) -> int:
    problems_dir = args.problems.resolve()
    missing = [f"level{level}/" for level in args.levels if not (problems_dir / f"level{level}").is_dir()]
    if missing:
        print(f"upstream_sweep: {problems_dir} has no {', '.join(missing)}: run `bash scripts/fetch_upstream.sh` "
              "(or give --problems a folder with level1/ ...)", file=sys.stderr)
        return EXIT_INPUT
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        fresh_start(out)
    solutions_dir, log = out / "solutions", out / "results.jsonl"
    try:
        problems = select_problems(problems_dir, args.levels, None if args.hard else args.limit, args.match)
    except ProblemError as exc:
        print(f"upstream_sweep: {exc}", file=sys.stderr)
        return EXIT_INPUT
    hard = None
    if args.hard is not None:
        problems, hard = hardest_subset(problems, args)
    staged, not_staged = stage(problems, solutions_dir)
    if args.limit is None and args.match is None and args.hard is None:  # a file outside a subset was not asked for
        not_problems = unreadable_files(problems_dir, args.levels, find_problems(problems_dir))
        not_staged += [{"problem": name, "reason": "not read as a problem file"} for name in not_problems]
    if not staged:
        print(f"upstream_sweep: no problem selected in {problems_dir} (levels {args.levels}, --match "
              f"{args.match!r})", file=sys.stderr)
        return EXIT_INPUT
    errors = mapping_errors(problems_dir, solutions_dir, staged)
    if errors:
        print("upstream_sweep: kerneljudge run would not map these copies to their problems:\n  "
              + "\n  ".join(errors), file=sys.stderr)
        return EXIT_INPUT
    command = judge_command(args, problems_dir, solutions_dir, log)
    lines_before = len(read_log(log))
    print(f"upstream_sweep: {len(staged)} identity copies in {solutions_dir}\n  {shlex.join(command)}", file=sys.stderr)
    result = run_judge(command, log, out)
    rows = read_log(log)
    verdicts = sweep_verdicts(rows, staged, solutions_dir)
    new_keys = {(r.get("problem_sha256"), r.get("solution_sha256")) for r in rows[lines_before:]}
    judged_now = sum(1 for v in verdicts if (v.get("problem_sha256"), v.get("solution_sha256")) in new_keys)
    gpu_samples, host_samples = result.pop("gpu_samples"), result.pop("host_samples")
    run = dict(result, command=shlex.join(["python", "scripts/upstream_sweep.py", *argv]),
               judge_command=shlex.join(command), date=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               host=platform.platform(), cpu_count=os.cpu_count(), problems_dir=str(problems_dir), log=str(log),
               selected=len(problems), staged=len(staged), not_staged=not_staged, hard=hard,
               judged_now=judged_now, resumed=len(verdicts) - judged_now)
    (out / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True) + "\n")
    write_samples(out / "gpu_samples.csv", gpu_samples, GPU_FIELDS)
    write_samples(out / "host_samples.csv", host_samples, HOST_FIELDS)
    path = write_report(out, summarize(verdicts, gpu_samples, host_samples, run))
    print(f"upstream_sweep: {len(verdicts)} verdicts; report: {path}", file=sys.stderr)
    if result["interrupted"]:
        return 130
    return 0 if result["exit_code"] == 0 else result["exit_code"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.from_jsonl is not None:
        return report_only(args)
    return sweep(args, argv)


if __name__ == "__main__":
    sys.exit(main())
