"""Run what only a GPU can show, and write a dated summary.

    python scripts/gpu_report.py fixtures --out DIR   # labelled fixtures that run on CUDA: verdict vs label
        [--match 'gpu_cupy_*' ...] [--policy lenient] # only fixtures whose file name matches; the lenient
                                                      # label where a fixture has one; a fixture whose library
                                                      # (# needs: cuda,cupy) does not import is listed as skipped
    python scripts/gpu_report.py examples --out DIR   # the main job on the GPU
    python scripts/gpu_report.py bench --out DIR [--count 12] [--triton 0] [--form cuda|cupy|cuda_core]
                                                      # batch speed: N distinct CUDA solutions (+ Triton
                                                      # ones), cold build cache

Each writes DIR/<name>.json and DIR/<name>.md with the date, GPU, driver, versions and the command.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kerneljudge.core.paths import examples_root, problems_root
from kerneljudge.analysis import detect_backend  # noqa: E402
from kerneljudge.judging.batch import Job, run_batch  # noqa: E402
from kerneljudge.core.problem import read_problem  # noqa: E402
from kerneljudge.results.text_tables import fast_p_line, verdict_table  # noqa: E402
from kerneljudge.core.types import JudgeOptions  # noqa: E402
from tests.labels import collect, skip_reason  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLES = examples_root()


def machine() -> dict:
    import torch

    info = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "python": platform.python_version(),
            "torch": torch.__version__, "cuda": torch.version.cuda, "command": " ".join(sys.argv),
            "cpu_count": os.cpu_count()}
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        info["nvidia_smi"] = smi
    except (OSError, subprocess.TimeoutExpired):
        pass
    return info


def write(out: Path, name: str, payload: dict, markdown: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(payload, indent=1, sort_keys=True, default=str))
    (out / f"{name}.md").write_text(markdown)
    print(markdown)


def header_md(title: str, info: dict) -> str:
    lines = [f"# {title}", ""] + [f"- {k}: {v}" for k, v in info.items()]
    return "\n".join(lines) + "\n\n"


def select_fixtures(match: list[str] | None) -> tuple[list, list[dict]]:
    """Fixtures that can run on a GPU (CUDA, Triton, the other GPU backends, device-agnostic Python) whose file
    name matches one of `match` (all when none), and rows for those skipped because a library is missing."""
    cases, skipped = [], []
    for case in collect(FIXTURES / "solutions"):
        if match and not any(fnmatch.fnmatch(case.path.name, pattern) for pattern in match):
            continue
        backend = detect_backend(case.path.read_text())
        if backend == "cpp" or "held_out" in case.needs:
            continue  # C++ kernels read host memory; they are CPU fixtures
        reason = skip_reason(case)
        if reason:
            skipped.append({"fixture": case.path.name, "threat": case.threat, "expected": case.expect,
                            "got": "skipped", "ok": None, "reason": reason})
            continue
        cases.append(case)
    return cases, skipped


def expected_verdict(case, policy: str) -> str:
    return (case.expect_lenient or case.expect) if policy == "lenient" else case.expect


def cmd_fixtures(args) -> None:
    """Fixtures that can run on a GPU: CUDA ones, Triton ones and device-agnostic Python ones."""
    cases, skipped = select_fixtures(args.match)
    if not cases:
        print(f"no fixture to run (--match {args.match}; skipped: {[r['fixture'] for r in skipped]})",
              file=sys.stderr)
    jobs, labels = [], {}
    for case in cases:
        problem = read_problem(FIXTURES / "problems" / (case.problem or "scale_relu.py"))
        jobs.append(Job(problem, case.path))
        labels[str(case.path.resolve())] = case
    # tiny problems: 30 s is ample to run one, 150 s to build the largest fixture; the hang fixtures
    # (one holds the GPU until its run limit) then cost half a minute each, not five
    options = JudgeOptions(device="cuda", run_timeout_s=30, build_timeout_s=150, time_budget_s=0.5,
                           cache_dir=args.cache, policy=args.policy)
    name = "fixtures" if args.policy == "strict" else f"fixtures-{args.policy}"
    started = time.monotonic()
    verdicts = run_batch(jobs, options, Path(args.out) / f"{name}.jsonl", jobs_in_parallel=args.jobs) if jobs else []
    wall = time.monotonic() - started
    rows, passed = [], 0
    for v in verdicts:
        case = labels[v["solution"]]
        expected = expected_verdict(case, args.policy)
        ok = v["verdict"] == expected
        passed += ok
        rows.append({"fixture": case.path.name, "threat": case.threat, "expected": expected,
                     "got": v["verdict"], "ok": ok, "reason": v["reason"], "flags": v["flags"],
                     "speedup": v["speedup"], "wall_s": v["wall_s"], "build_s": v["build_s"]})
    info = machine()
    info["policy"] = args.policy
    md = header_md(f"GPU fixtures: verdict vs label ({args.policy})", info)
    md += f"{passed}/{len(rows)} fixtures got their labelled verdict; batch wall time {wall:.1f} s.\n\n"
    if skipped:
        md += f"{len(skipped)} skipped: a library they need does not import here.\n\n"
    if verdicts:
        md += "Where the time went (seconds per solution):\n\n" + phase_table(verdicts) + "\n"
    md += "| fixture | threat | expected | got | ok | reason |\n|---|---|---|---|---|---|\n"
    for r in rows + skipped:
        ok = "skipped" if r["ok"] is None else ("yes" if r["ok"] else "NO")
        md += f"| {r['fixture']} | {r['threat'] or ''} | {r['expected']} | {r['got']} | {ok} | {r['reason'][:90]} |\n"
    write(Path(args.out), name, {"machine": info, "rows": rows, "skipped": skipped, "wall_s": wall}, md)


def cmd_examples(args) -> None:
    from kerneljudge.core.mapping import find_problems, pair_solutions

    problems = find_problems(EXAMPLES / "problems")
    pairs, _ = pair_solutions(EXAMPLES / "solutions", problems)
    jobs = [Job(p, s) for p, s in pairs if detect_backend(s.read_text()) in ("cuda", "triton")]
    options = JudgeOptions(device="cuda", cache_dir=args.cache)
    started = time.monotonic()
    verdicts = run_batch(jobs, options, Path(args.out) / "examples.jsonl", jobs_in_parallel=args.jobs)
    wall = time.monotonic() - started
    info = machine()
    md = header_md("Bundled examples on the GPU (the main job)", info)
    md += (f"Batch wall time {wall:.1f} s for {len(jobs)} solutions.\n\n"
           f"```\n{verdict_table(verdicts)}\n\n{fast_p_line(verdicts)}\n```\n")
    md += "\nWhere the time went (seconds per solution):\n\n" + phase_table(verdicts)
    write(Path(args.out), "examples", {"machine": info, "verdicts": verdicts, "wall_s": wall}, md)


BENCHMARK_SOLUTIONS = ROOT / "benchmarks" / "solutions"
SUITE = problems_root()
SIZE_CONSTANTS = (r"(constexpr int kRowThreads = )(\d+)", r"(\b(?:block_size|threads|kThreads|BLOCK_SIZE)\s*=\s*)(\d+)")


def example_sources(backend: str) -> list[tuple[Path, Path]]:
    """(problem, solution) of the bundled examples' honest solutions in one backend."""
    from kerneljudge.core.mapping import find_problems, pair_solutions

    pairs, _ = pair_solutions(EXAMPLES / "solutions", find_problems(EXAMPLES / "problems"))
    return [(Path(p.path), s) for p, s in pairs if detect_backend(s.read_text()) == backend and "wrong" not in s.name]


def cuda_sources(examples_only: bool = False) -> list[tuple[Path, Path]]:
    """(problem, solution) of every honest CUDA solution here: the bundled examples' and those written for
    suite problems in the style of published KernelBench solutions (benchmarks/solutions/*/*__cuda.py)."""
    out = example_sources("cuda")
    for sol in [] if examples_only else sorted(BENCHMARK_SOLUTIONS.glob("level*/*__cuda.py")):
        out.append((SUITE / sol.parent.name / f"{sol.name.split('__')[0]}.py", sol))
    return out


def distinct_nvrtc_solutions(backend: str, count: int, folder: Path) -> list[tuple[Path, Path]]:
    """`count` CuPy or cuda.core solutions (the bundled examples', in turn), each with a comment naming its variant.
    Each compiles its kernels cold anyway: NVRTC keeps nothing on disk for cuda.core, and CuPy's kernel cache is in
    the solution's own scratch folder."""
    sources = example_sources(backend)
    if not sources:
        raise SystemExit(f"no bundled example solution in {backend}")
    out = []
    for variant in range(count):
        problem, sol = sources[variant % len(sources)]
        path = folder / f"{problem.stem}__bench{variant}.py"
        path.write_text(sol.read_text() + f"\n# benchmark variant {variant}\n")
        out.append((problem, path))
    return out


def distinct_cuda_solutions(count: int, folder: Path, examples_only: bool = False) -> list[tuple[Path, Path]]:
    """`count` CUDA solutions with distinct sources: each honest one, then generated variants of them (another
    block size where the source has one constant for it, and a comment naming the variant, so every one is a
    full build of its own: build folders are keyed by a hash of the source)."""
    sources = cuda_sources(examples_only)
    out = []
    for variant in range(count):
        problem, sol = sources[variant % len(sources)]
        text = sol.read_text()
        round_ = variant // len(sources)
        if round_:
            threads = (128, 512, 1024, 256)[(round_ - 1) % 4]
            for pattern in SIZE_CONSTANTS:
                text, n = re.subn(pattern, rf"\g<1>{threads}", text, count=1)
                if n:
                    break
        text, n = re.subn(r'(cuda_sources\s*=\s*)(\w+)', rf'\g<1>"// benchmark variant {variant}\\n" + \g<2>', text,
                          count=1)
        if not n:
            raise SystemExit(f"{sol.name}: cannot find its cuda_sources argument to vary")
        path = folder / f"{problem.stem}__bench{variant}.py"
        path.write_text(text)
        out.append((problem, path))
    return out


def triton_solutions(count: int) -> list[tuple[Path, Path]]:
    sols = sorted(BENCHMARK_SOLUTIONS.glob("level*/*__triton.py"))[:count]
    return [(SUITE / s.parent.name / f"{s.name.split('__')[0]}.py", s) for s in sols]


def phase_table(verdicts: list[dict]) -> str:
    """Where the judge's time went, per phase: median and total over the solutions (seconds)."""
    names = sorted({k for v in verdicts for k in (v.get("phases_s") or {})})
    lines = ["| phase | median s | max s | total s |", "|---|---|---|---|"]
    for name in names:
        xs = sorted((v.get("phases_s") or {}).get(name, 0.0) for v in verdicts)
        lines.append(f"| {name} | {xs[len(xs) // 2]:.2f} | {xs[-1]:.2f} | {sum(xs):.1f} |")
    # `outputs` is counted inside the phases that compare outputs: left out of the sum
    on_device = sorted(sum(t for k, t in (v.get("phases_s") or {}).items()
                           if k not in ("build", "wait_for_device", "outputs")) for v in verdicts)
    if on_device:
        lines.append(f"| (on the GPU: all but build, wait and outputs) | {on_device[len(on_device) // 2]:.2f} | "
                     f"{on_device[-1]:.2f} | {sum(on_device):.1f} |")
    return "\n".join(lines) + "\n"


def completion_timeline(finished: list[float], wall: float) -> str:
    """When a quarter, half, three quarters and all of the solutions had their verdicts (s after the start)."""
    finished = sorted(finished)
    marks = [(q, finished[max(0, int(q * len(finished)) - 1)]) for q in (0.25, 0.5, 0.75, 1.0)] if finished else []
    return ", ".join(f"{int(q * 100)}% at {t:.0f} s" for q, t in marks) + f" (wall {wall:.0f} s)"


def build_table(verdicts: list[dict]) -> str:
    """Each CUDA build: seconds, and whether slim or lean headers and the precompiled header served."""
    rows = [b for v in verdicts for b in v.get("builds") or [] if not b.get("reused")]
    if not rows:
        return "(no builds)\n"
    secs = sorted(b["seconds"] for b in rows)
    slim = sum(bool(b.get("slim_headers")) for b in rows)
    lean = sum(bool(b.get("lean_headers")) for b in rows)
    pch_used = sum(bool(b.get("precompiled_header")) for b in rows)
    return (f"{len(rows)} builds: median {secs[len(secs) // 2]:.1f} s, max {secs[-1]:.1f} s, total {sum(secs):.0f} s; "
            f"{slim} with slim and {lean} with lean CUDA headers, {pch_used} with the precompiled binding header\n")


def cmd_bench(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kj-bench-"))
    cache = tmp / "cache"  # cold: every build is a real build
    if args.form == "cuda":
        pairs = distinct_cuda_solutions(args.count, tmp, args.examples_only)
    else:
        pairs = distinct_nvrtc_solutions(args.form, args.count, tmp)
    pairs += triton_solutions(args.triton)
    jobs = [Job(read_problem(p), s) for p, s in pairs]
    options = JudgeOptions(device="cuda", cache_dir=str(cache))
    started = time.monotonic()
    finished: list[float] = []

    Path(args.out).mkdir(parents=True, exist_ok=True)
    progress_file = Path(args.out) / "bench-progress.txt"  # what was done when, even if the run is cut short

    def progress(message: str) -> None:
        if message.startswith("["):
            finished.append(time.monotonic() - started)
        print(message, file=sys.stderr, flush=True)
        with progress_file.open("a") as f:
            f.write(f"{time.monotonic() - started:7.1f} s  {message}\n")

    verdicts = run_batch(jobs, options, tmp / "bench.jsonl", jobs_in_parallel=args.jobs, progress=progress)
    wall = time.monotonic() - started
    n_cuda = args.count
    per_hour = len(jobs) / wall * 3600
    info = machine()
    builds = [v["build_s"] for v in verdicts if v.get("build_s")]
    summary = {"solutions": len(jobs), "cuda_solutions": n_cuda, "triton_solutions": len(jobs) - n_cuda,
               "wall_s": round(wall, 1), "solutions_per_hour": round(per_hour),
               "correct": sum(v["verdict"] == "correct" for v in verdicts),
               "verdicts": {k: sum(v["verdict"] == k for v in verdicts)
                            for k in sorted({v["verdict"] for v in verdicts})},
               "median_build_s": sorted(builds)[len(builds) // 2] if builds else None,
               "timeline": completion_timeline(finished, wall), "builds": build_table(verdicts).strip()}
    form = {"cuda": "CUDA load_inline", "cupy": "CuPy (NVRTC)", "cuda_core": "cuda.core (NVRTC)"}[args.form]
    summary["form"] = args.form
    md = header_md(f"Batch judging speed: distinct {form} solutions, cold build cache", info)
    md += (f"{len(jobs)} solutions ({n_cuda} {form}, {len(jobs) - n_cuda} Triton) judged end to end "
           f"(build, correctness trials, timing of reference and solution, held-out shapes) from a cold build "
           f"cache in {wall:.1f} s: **{per_hour:.0f} solutions an hour**; {summary['correct']} correct "
           f"({summary['verdicts']}).\n\n"
           f"Verdicts over time: {summary['timeline']}.\n\n{summary['builds']}\n\n"
           f"Where the time went (seconds per solution; build and wait overlap other solutions' work):\n\n"
           f"{phase_table(verdicts)}\n```\n{verdict_table(verdicts)}\n```\n")
    write(Path(args.out), "bench", {"machine": info, "summary": summary, "verdicts": verdicts}, md)
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("fixtures", "examples", "bench"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--count", type=int, default=12, help="bench: distinct CUDA solutions (default 12)")
    parser.add_argument("--triton", type=int, default=0, help="bench: Triton solutions added to the batch")
    parser.add_argument("--form", choices=("cuda", "cupy", "cuda_core"), default="cuda",
                        help="bench: CUDA kernels through load_inline (default), or compiled by NVRTC through CuPy or "
                             "cuda.core (the bundled examples' solutions in that form)")
    parser.add_argument("--examples-only", action="store_true",
                        help="bench --form cuda: only the bundled examples' CUDA solutions (the problems the CuPy and "
                             "cuda.core examples solve)")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--match", action="append", default=None, metavar="GLOB",
                        help="fixtures: only those whose file name matches (fnmatch; repeat for several)")
    parser.add_argument("--policy", choices=("strict", "lenient"), default="strict",
                        help="fixtures: judge under this policy, against the fixture's label for it")
    args = parser.parse_args()
    {"fixtures": cmd_fixtures, "examples": cmd_examples, "bench": cmd_bench}[args.what](args)


if __name__ == "__main__":
    main()
