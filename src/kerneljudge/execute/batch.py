"""Judge many solutions: builds in parallel on the CPU cores while one solution at a time uses each device.

Every verdict is appended to a JSONL file as soon as it is reached (flushed and fsynced), so a crash or
an interrupt loses nothing, and a re-run skips what is already there.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..problem import Problem, sha256_text
from ..jsonl import read_objects
from ..types import JudgeOptions
from . import environment, shapes
from .evaluate import Slot, evaluate, make_slots


@dataclass(frozen=True)
class Job:
    problem: Problem
    solution: Path

    def key(self, options: JudgeOptions, device: str) -> str:
        sol_sha = sha256_text(self.solution.read_text())
        return "|".join([self.problem.sha256, sol_sha, device, options.precision, options.policy, options.numerics,
                         options.clock])


def verdict_key(v: dict[str, Any]) -> str:
    return "|".join([v.get("problem_sha256", ""), v.get("solution_sha256", ""), v.get("device", ""),
                     v.get("precision", ""), v.get("policy", ""), v.get("contract", "tf32"),
                     v.get("clock", "end_to_end")])


def read_log(path: Path) -> list[dict[str, Any]]:
    """Verdicts already in a run log; a torn last line (crash mid-write) is ignored."""
    return [row for row in read_objects(path) if "verdict" in row]


def device_count(device: str) -> int:
    if device != "cuda":
        return 1
    import torch

    return max(1, torch.cuda.device_count())


def run_batch(jobs: list[Job], options: JudgeOptions, out_path: Path, jobs_in_parallel: int | None = None,
              progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Judge every job not yet in out_path; return all verdicts for these jobs (old and new)."""
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    device = environment.resolve_device(options.device)
    cache = options.cache_dir or environment.default_cache_dir()
    done = {verdict_key(v): v for v in read_log(out_path)}
    keyed = [(job, job.key(options, device)) for job in jobs]
    todo = [(job, key) for job, key in keyed if key not in done]
    if len(todo) < len(keyed):
        say(f"resuming: {len(keyed) - len(todo)} verdict(s) already in {out_path}, {len(todo)} to judge")
    workers = jobs_in_parallel or (os.cpu_count() or 1 if device == "cuda" else min(2, os.cpu_count() or 1))
    workers = max(1, min(workers, len(todo) or 1))
    n_slots = device_count(device)
    # a CUDA load_inline build has two compile jobs (the C++ binding and the .cu file): let both run at once
    build_env = {"MAX_JOBS": str(max(2, (os.cpu_count() or 1) // workers))}
    slots = make_slots(device, options, n_slots, build_env)
    unique = list({job.problem.path: job.problem for job, _ in todo}.values())
    plans = dict(zip((p.path for p in unique), shapes.resolve_many(unique, cache)))
    lock = threading.Lock()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    counter = {"n": 0}

    def work(index: int, job: Job) -> dict[str, Any]:
        verdict = evaluate(job.problem, str(job.solution), options, slots[index % n_slots], device,
                           plans.get(job.problem.path)).to_dict()
        with lock:
            with out_path.open("a") as log:
                log.write(json.dumps(verdict, sort_keys=True) + "\n")
                log.flush()
                os.fsync(log.fileno())
            counter["n"] += 1
            say(f"[{counter['n']}/{len(todo)}] {job.problem.id} <- {job.solution.name}: {_summary(verdict)}")
        return verdict

    try:
        with ThreadPoolExecutor(max_workers=workers + n_slots) as pool:
            for slot in slots if todo else []:
                pool.submit(_start_reference, slot)  # starts while the first solutions build
            futures = {pool.submit(work, i, job): key for i, (job, key) in enumerate(todo)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
    finally:
        for slot in slots:
            slot.reference.close()
    return [results.get(key) or done[key] for _, key in keyed]


def _start_reference(slot: Slot) -> None:
    with slot.lock:
        try:
            slot.reference.hello()
        except Exception:  # the first solution to use the slot gets the error in its verdict
            pass


def _summary(v: dict[str, Any]) -> str:
    text = v["verdict"]
    if v.get("speedup") is not None:
        text += f" {v['speedup']:.2f}x"
    if v["verdict"] == "correct" and not v.get("accepted"):
        text += f" (not accepted: {', '.join(v.get('flags', []))})"
    elif v["verdict"] != "correct":
        text += f" - {v.get('reason', '')[:100]}"
    if v.get("build_s") is not None:
        text += f" [build {v['build_s']:.1f} s, wall {v.get('wall_s', 0):.1f} s]"
    return text
