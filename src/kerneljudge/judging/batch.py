"""Judge many solutions: builds in parallel on the CPU cores, checks a few at a time on each device, timing alone.

Every verdict is appended to a JSONL file as soon as it is reached (flushed and fsynced), so a crash or
an interrupt loses nothing, and a re-run skips what is already there. The judging itself is a JudgePool
(judging/executors/local.py) on this machine, or a Ray cluster with executor="ray" (judging/executors/ray.py).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kerneljudge.analysis.backend import detect_backend
from kerneljudge.core.jsonl import read_objects
from kerneljudge.core.problem import Problem, sha256_text
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging import environment, shape_budget, shapes
from kerneljudge.judging.environment import available_memory
from kerneljudge.judging.executors.base import Executor, open_executor
from kerneljudge.core.logfile import AppendLog
from kerneljudge.judging.executors.local import default_workers, device_count  # noqa: F401  (device_count: kept for callers of this module)


@dataclass(frozen=True)
class Job:
    problem: Problem
    solution: Path

    def key(self, options: JudgeOptions, device: str) -> str:
        sol_sha = sha256_text(self.solution.read_text())
        return "|".join([self.problem.sha256, sol_sha, device, options.precision, options.policy, options.numerics,
                         options.clock, options.held_out, str(options.device_memory or "")])


def verdict_key(v: dict[str, Any]) -> str:
    # a verdict from before the held-out modes was judged at odd held-out sizes: the `general` mode
    return "|".join([v.get("problem_sha256", ""), v.get("solution_sha256", ""), v.get("device", ""),
                     v.get("precision", ""), v.get("policy", ""), v.get("contract", "tf32"),
                     # before clock_rule a verdict's clock was the option it was judged under
                     v.get("clock_rule") or v.get("clock", "end_to_end"),
                     (v.get("shapes") or {}).get("held_out_mode", "general"),
                     # the --device-memory budget it was judged under (none: the card's)
                     str((v.get("shapes") or {}).get("device_memory") or "")])


def read_log(path: Path) -> list[dict[str, Any]]:
    """Verdicts already in a run log; a torn last line (crash mid-write) is ignored."""
    return [row for row in read_objects(path) if "verdict" in row]


def run_batch(jobs: list[Job], options: JudgeOptions, out_path: Path, jobs_in_parallel: int | None = None,
              progress: Callable[[str], None] | None = None, executor: str | Executor = "local",
              address: str | None = None) -> list[dict[str, Any]]:
    """Judge every job not yet in out_path; return all verdicts for these jobs (old and new).

    executor: "local" (this machine, the default), "ray" (a Ray cluster at `address`, or a local one), or
    an Executor the caller opened (and closes).
    """
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    device = environment.resolve_device(options.device)
    done = {verdict_key(v): v for v in read_log(out_path)}
    keyed = [(job, job.key(options, device)) for job in jobs]
    todo = [(job, key) for job, key in keyed if key not in done]
    if len(todo) < len(keyed):
        say(f"resuming: {len(keyed) - len(todo)} verdict(s) already in {out_path}, {len(todo)} to judge")
    results: dict[str, dict[str, Any]] = {}
    if todo:
        todo, nothing_to_build = builds_last(todo)
        workers = max(1, min(jobs_in_parallel or batch_workers(nothing_to_build, device), len(todo)))
        owned = isinstance(executor, str)
        pool = open_executor(executor, options, workers=workers, address=address) if owned else executor
        try:
            with AppendLog(out_path) as log:
                budget = shape_budget.judgement_budget(options, device, shape_budget.first_gpu(dict(os.environ)))
                results = _judge_all(pool, todo, options, log, say, budget)
        finally:
            if owned:
                pool.close()
    return [results.get(key) or done[key] for _, key in keyed]


def _judge_all(pool: Executor, todo: list[tuple[Job, str]], options: JudgeOptions, log: AppendLog,
               say: Callable[[str], None], memory_budget: int | None = None) -> dict[str, dict[str, Any]]:
    """Submit each problem's solutions as soon as its shapes are resolved (judging/shapes.py: a few probe
    children side by side), so the device starts on the first problems while later ones are still planned;
    log each verdict as it is reached. `memory_budget`: bytes one judgement may need (judging/shape_budget.py),
    for presets fitted to the device."""
    pool.warm(options)   # reference processes start while the first solutions build
    by_problem: dict[str, list[tuple[Job, str]]] = {}
    for job, key in todo:
        by_problem.setdefault(job.problem.path, []).append((job, key))
    unique = [jobs[0][0].problem for jobs in by_problem.values()]
    finished: queue.Queue = queue.Queue()

    def plan_and_submit() -> None:
        try:
            for problem, plan in shapes.resolve_concurrently(unique, options.cache_dir, shape_probes(),
                                                             mode=options.held_out, memory_budget=memory_budget):
                for job, key in by_problem[problem.path]:
                    future = pool.submit(job.problem, job.solution, options, plan=plan)
                    future.add_done_callback(lambda f, job=job, key=key: finished.put((f, job, key)))
        except BaseException as exc:   # reaches the main thread, which re-raises it
            finished.put((exc, None, None))

    threading.Thread(target=plan_and_submit, name="kj-plan-submit", daemon=True).start()
    results: dict[str, dict[str, Any]] = {}
    for n in range(1, len(todo) + 1):
        future, job, key = finished.get()
        if isinstance(future, BaseException):
            raise future
        verdict = future.result().to_dict()
        log.append(verdict)
        results[key] = verdict
        say(f"[{n}/{len(todo)}] {job.problem.id} <- {job.solution.name}: {_summary(verdict)}")
    return results


def shape_probes() -> int:
    """Probe children resolving problems' shapes side by side: a quarter of the cores (the rest build and judge),
    at least one, at most eight."""
    return max(1, min(8, (os.cpu_count() or 1) // 4))


def builds_last(todo: list[tuple[Job, str]]) -> tuple[list[tuple[Job, str]], int]:
    """Solutions that compile no C++/CUDA extension first, each group in the order given, and how many those
    are. The device then judges them while the first builds compile, and the batch does not end on them
    waiting behind a queue of built solutions (a two-stage flow shop, CPU then device, ends soonest with the
    short first stages first: Johnson's rule). The pool takes jobs in the order they are submitted."""
    builds = [_compiles_an_extension(job.solution) for job, _ in todo]
    order = sorted(range(len(todo)), key=lambda i: builds[i])
    return [todo[i] for i in order], builds.count(False)


# host memory a solution's process may hold (torch imported, a CUDA context): extra workers only where it is free
WORKER_MEMORY_BYTES = 3 << 29


def batch_workers(nothing_to_build: int, device: str) -> int:
    """Solutions in flight: the pool's default (one per core on a GPU machine), plus on a GPU one per solution
    that compiles nothing, up to the cores again and as far as free memory allows. Those wait for the device
    without needing a build slot; had they taken workers from the default, fewer builds would run while they
    wait (on the H200, ten Triton solutions queued first left six builds running for the first 50 s)."""
    base = default_workers(device)
    if device != "cuda":
        return base
    room = available_memory() // WORKER_MEMORY_BYTES - base
    return base + max(0, min(base, nothing_to_build, room))


def _compiles_an_extension(path: Path) -> bool:
    try:
        return detect_backend(path.read_text()) in ("cuda", "cpp")
    except (OSError, UnicodeDecodeError):
        return True   # judged anyway; its verdict will say what is wrong with the file


def _summary(v: dict[str, Any]) -> str:
    text = v["verdict"]
    if v.get("speedup") is not None:
        text += f" {v['speedup']:.2f}x"
    if v["verdict"] == "correct" and not v.get("accepted"):
        text += f" (not accepted: {', '.join(v.get('flags', []))})"
    elif v["verdict"] == "unjudgeable":
        text += f" ({(v.get('problem_outcome') or {}).get('kind')}) - {v.get('reason', '')[:100]}"
    elif v["verdict"] != "correct":
        text += f" - {v.get('reason', '')[:100]}"
    if v.get("build_s") is not None:
        text += f" [build {v['build_s']:.1f} s, wall {v.get('wall_s', 0):.1f} s]"
    return text
