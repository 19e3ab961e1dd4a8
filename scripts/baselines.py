"""Measure reference baselines for the bundled suite with the judge's own timing method.

    python scripts/baselines.py --out docs/evidence/baselines-h200.jsonl [--mode eager|compile|both] [--level N]
        [--problems ID,...] [--limit N] [--budget 0.5] [--preset default|small] [--device auto|cuda|cpu]
        [--precision fp32] [--workers N] [--gpus N] [--compile-threads N] [--deadline-s S]
        [--eager-timeout S] [--compile-timeout S] [--retry-failed]

One JSON line per (problem, mode), fsynced as soon as it is measured: the reference's median time and
statistics (reference_worker.time_locally, the judge's method), the eager reference's peak GPU memory
(torch.cuda.max_memory_allocated over building the model and one forward), torch.compile's compile time,
the machine (GPU, driver, torch, CUDA, Triton, CPU count) and the date. Several worker processes compile
in parallel; timings on one GPU are serialised by a cross-process lock per GPU, and all visible GPUs are
used. A task that runs past its timeout is killed and recorded as timed out; at --deadline-s the run stops
cleanly, and re-running the same command measures only what is left (failures too with --retry-failed).
Turn the lines into the packaged baselines and a summary with scripts/baselines_report.py.

Exit status: 0 when nothing is left to measure, 1 when the deadline (or an interruption) left work undone.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.judging import environment  # noqa: E402
from kerneljudge.suite.baseline_runner import BaselineRunner, RunnerConfig, default_lock_dir  # noqa: E402
from kerneljudge.suite.catalog import list_problems  # noqa: E402


def _visible_gpus(limit: int | None) -> list[str]:
    """CUDA_VISIBLE_DEVICES entries of the GPUs to use (each worker sees exactly one of them)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and env.strip():
        entries = [e.strip() for e in env.split(",") if e.strip()]
    else:
        import torch

        entries = [str(i) for i in range(torch.cuda.device_count())]
    return entries[:limit] if limit else entries


def _host(device: str, argv: list[str]) -> dict:
    info = {"cpu_count": os.cpu_count(), "platform": platform.platform(), "command": " ".join(argv)}
    if device == "cuda":
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                  "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
            info["nvidia_smi"] = [line.strip() for line in smi.splitlines() if line.strip()]
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode == 0:
            info["commit"] = head.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return info


def _terminate(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSONL file (appended to; resumed when it exists)")
    parser.add_argument("--mode", choices=("eager", "compile", "both"), default="both")
    parser.add_argument("--level", type=int, action="append", default=None,
                        help="only this level (repeatable; default: every level, 4 only with transformers)")
    parser.add_argument("--problems", default=None, metavar="ID,...",
                        help="only these problem ids (e.g. level1/1_square_matmul) or file stems")
    parser.add_argument("--limit", type=int, default=None, help="at most this many problems with work left")
    parser.add_argument("--budget", type=float, default=0.5, help="timing budget per problem and mode (s)")
    parser.add_argument("--preset", choices=("default", "small"), default="default")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32")
    cpus = os.cpu_count() or 1
    parser.add_argument("--workers", type=int, default=None,
                        help=f"worker processes (default: half the CPU cores, here {max(1, cpus // 2)})")
    parser.add_argument("--gpus", type=int, default=None, help="use only the first N visible GPUs (default all)")
    parser.add_argument("--compile-threads", type=int, default=None,
                        help="TORCHINDUCTOR_COMPILE_THREADS per worker (default: cores / workers)")
    parser.add_argument("--deadline-s", type=float, default=None,
                        help="stop cleanly this many seconds after the start (in-flight tasks are dropped, not "
                             "recorded; the exit status is then 1)")
    parser.add_argument("--eager-timeout", type=float, default=120.0, help="seconds per eager task (default 120)")
    parser.add_argument("--compile-timeout", type=float, default=150.0,
                        help="seconds per torch.compile task, compilation included (default 150)")
    parser.add_argument("--retry-failed", action="store_true", help="measure again what failed or timed out")
    parser.add_argument("--lock-dir", default=None, help=f"folder of the per-GPU lock files (default "
                                                         f"{default_lock_dir()})")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default ~/.cache/kerneljudge)")
    args = parser.parse_args(argv)

    device = environment.resolve_device(args.device)
    problems = []
    for level in args.level or [None]:
        problems += list_problems(level)
    if args.problems:
        wanted = {w.strip() for w in args.problems.split(",") if w.strip()}
        problems = [p for p in problems if p.id in wanted or Path(p.path).stem in wanted]
        unknown = wanted - {p.id for p in problems} - {Path(p.path).stem for p in problems}
        if unknown:
            print(f"baselines: no such problem(s): {', '.join(sorted(unknown))}", file=sys.stderr)
    if not problems:
        print("baselines: no problems selected", file=sys.stderr)
        return 2
    slots = _visible_gpus(args.gpus) if device == "cuda" else ["cpu"]
    if not slots:
        print("baselines: no CUDA device visible", file=sys.stderr)
        return 2
    workers = args.workers or max(1, cpus // 2)
    compile_threads = args.compile_threads or max(1, cpus // workers)
    config = RunnerConfig(
        out=args.out, device=device, precision=args.precision, preset=args.preset,
        modes=("eager", "compile") if args.mode == "both" else (args.mode,), budget_s=args.budget,
        workers=workers, device_slots=slots, lock_dir=args.lock_dir or default_lock_dir(),
        deadline_s=None if args.deadline_s is None else args.deadline_s - (time.monotonic() - started),
        eager_timeout_s=args.eager_timeout, compile_timeout_s=args.compile_timeout,
        compile_threads=compile_threads, retry_failed=args.retry_failed, limit=args.limit,
        cache_dir=args.cache_dir or default_cache_dir(),
        host={**_host(device, ["scripts/baselines.py", *argv]), "workers": workers,
              "compile_threads": compile_threads, "device_slots": slots})
    signal.signal(signal.SIGTERM, _terminate)
    from kerneljudge.core.progress import Progress

    progress = Progress(desc="baselines", unit="task")
    runner = BaselineRunner(config, progress=progress.as_stream())
    try:
        result = runner.run(problems)
    except KeyboardInterrupt:
        print(f"baselines: interrupted; finished lines are in {args.out}; run the same command to continue",
              file=sys.stderr)
        return 1
    finally:
        progress.close()
    print(f"baselines: {result.measured} measured, {result.failed} failed, {result.timed_out} timed out, "
          f"{result.dropped_at_deadline} dropped at the deadline, {result.left} not started "
          f"({result.wall_s} s) -> {args.out}", file=sys.stderr)
    if not result.complete:
        print("baselines: work left; run the same command again to measure the rest", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
