"""Measure eager and torch.compile reference baselines for many problems, in parallel, resumably.

torch.compile spends 10-60 s of CPU per problem, the timings a few tenths of a second of GPU. So several
worker processes (worker/baseline.py) build and compile problems at once, each pinned to one GPU,
while every timing holds that GPU's cross-process lock (core/device_lock.py): compilation overlaps,
timings never do. Timing is the judge's own method (worker/reference_timing.time_locally).

The orchestrator (this module) never imports torch. It hands out tasks (problem, mode), enforces a
timeout per task (a pathological compile is killed with its worker and recorded as timed out) and a
global deadline (in-flight work is dropped, nothing half-done is written, and re-running the same command
measures the rest), and appends one fsynced JSON line per finished task. Lines already in the output
(same problem text, mode, preset, device, precision) are skipped on a re-run; so are recorded failures
unless retry_failed is set.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TextIO

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core import channel
from kerneljudge.judging import environment
from kerneljudge.judging.child import Child
from kerneljudge.core.device_lock import lock_path
from kerneljudge.core.jsonl import read_objects as read_rows
from kerneljudge.core.problem import Problem

WORKER_MODULE = "kerneljudge.worker.baseline"
MODES = ("eager", "compile")
HELLO_TIMEOUT_S = 300.0
START_FAILURES = 3   # a worker slot that cannot start its process this many times in a row gives up
MIN_START_S = 0.2    # a task is not started with less time than this left before the deadline


# ------------------------------------------------------------------------------------------ the log


def row_status(row: dict[str, Any]) -> str:
    """ok, error or timeout (rows of the first version of the script carry only ref_ms or error)."""
    status = row.get("status")
    if status:
        return str(status)
    return "ok" if row.get("ref_ms") is not None else "error"


def row_key(row: dict[str, Any]) -> tuple:
    return (row.get("problem_sha256"), row.get("mode"), row.get("preset"), row.get("device"),
            row.get("precision") or "fp32")


def finished_keys(rows: Iterable[dict[str, Any]], retry_failed: bool = False) -> set[tuple]:
    """Keys that need no new measurement: measured ones, and failed ones unless retry_failed."""
    return {row_key(r) for r in rows if row_status(r) == "ok" or not retry_failed}


class JsonlWriter:
    """Appends rows from several threads; each line is flushed and fsynced before append() returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def append(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, sort_keys=True) + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())


# ---------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Task:
    problem: Problem
    mode: str
    preset_name: str
    preset: dict[str, Any]


def plan_tasks(problems: Iterable[Problem], modes: Iterable[str], done: set[tuple], preset: str, device: str,
               precision: str, limit: int | None = None) -> list[Task]:
    """What is left to measure: for up to `limit` problems with something left (suite order), each mode
    not yet done. Eager tasks come in suite order; compile tasks highest level first, so the longest
    compilations start early and the short ones fill the gaps at the end."""
    modes = [m for m in MODES if m in set(modes)]
    chosen: list[tuple[Problem, list[str]]] = []
    for problem in problems:
        if limit is not None and len(chosen) >= limit:
            break
        needed = [m for m in modes if (problem.sha256, m, preset, device, precision) not in done]
        if needed:
            chosen.append((problem, needed))
    tasks = [Task(p, m, preset, p.preset("small") if preset == "small" else {})
             for p, needed in chosen for m in needed]
    eager = [t for t in tasks if t.mode == "eager"]
    compiled = sorted((t for t in tasks if t.mode == "compile"), key=lambda t: -t.problem.level)  # stable
    return eager + compiled


class TaskQueue:
    """Eager and compile tasks in two lines; a worker takes from its preferred line, else the other."""

    def __init__(self, tasks: Iterable[Task]):
        self._lines = {m: deque(t for t in tasks if t.mode == m) for m in MODES}
        self._lock = threading.Lock()

    def take(self, prefer: str) -> Task | None:
        with self._lock:
            for mode in (prefer, *[m for m in MODES if m != prefer]):
                if self._lines[mode]:
                    return self._lines[mode].popleft()
        return None

    def put_back(self, task: Task) -> None:
        with self._lock:
            self._lines[task.mode].appendleft(task)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(q) for q in self._lines.values())


# -------------------------------------------------------------------------------------- the runner


@dataclass
class RunnerConfig:
    out: str
    device: str = "cuda"
    precision: str = "fp32"
    preset: str = "default"
    modes: tuple[str, ...] = MODES
    budget_s: float = 0.5
    workers: int = 1
    device_slots: list[str] = field(default_factory=lambda: ["cpu"])  # CUDA_VISIBLE_DEVICES entries, or "cpu"
    lock_dir: str = ""
    deadline_s: float | None = None
    eager_timeout_s: float = 120.0
    compile_timeout_s: float = 150.0
    compile_threads: int | None = None
    compile_nice: int = 10          # niceness of the compiling thread (the timing thread keeps 0)
    threads: int = 1
    retry_failed: bool = False
    limit: int | None = None
    cache_dir: str = ""
    worker_module: str = WORKER_MODULE
    extra_env: dict[str, str] = field(default_factory=dict)
    host: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    planned: int = 0
    measured: int = 0
    failed: int = 0
    timed_out: int = 0
    dropped_at_deadline: int = 0
    left: int = 0
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.left == 0 and self.dropped_at_deadline == 0


def default_lock_dir() -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), "kerneljudge-locks")


def device_key(slot: str) -> str:
    return "cpu" if slot == "cpu" else f"gpu-{slot}"


class _Slot:
    """One worker process (restarted after a crash or a timeout), pinned to one device."""

    def __init__(self, index: int, device_slot: str, config: RunnerConfig):
        self.index = index
        self.device_slot = device_slot
        self.config = config
        self.child: Child | None = None
        self.environment: dict[str, Any] = {}
        self.lock_path = lock_path(config.lock_dir or default_lock_dir(), device_key(device_slot))

    def env(self) -> dict[str, str]:
        c = self.config
        extra = dict(c.extra_env)
        if c.device == "cuda":
            extra["CUDA_VISIBLE_DEVICES"] = self.device_slot
        if c.compile_threads:
            extra["TORCHINDUCTOR_COMPILE_THREADS"] = str(c.compile_threads)
        return environment.child_env(c.device, c.threads, c.cache_dir or default_cache_dir(), extra)

    def start(self, timeout_s: float) -> None:
        self.child = Child(self.config.worker_module, self.env())
        reply, _ = self.child.request({"cmd": "hello", "device": self.config.device, "threads": self.config.threads,
                                       "preload_compiler": "compile" in self.config.modes,
                                       "compile_nice": self.config.compile_nice}, timeout_s)
        if reply.get("status") != "ok":
            raise RuntimeError(f"worker did not start: {reply.get('message', reply)}")
        self.environment = reply.get("environment", {})

    def stop(self, polite: bool = True) -> None:
        if self.child is not None:
            (self.child.close if polite else self.child.kill)()
            self.child = None


class BaselineRunner:
    def __init__(self, config: RunnerConfig, progress: TextIO | None = sys.stderr):
        self.config = config
        self.progress = progress
        self.writer = JsonlWriter(config.out)
        self._count_lock = threading.Lock()
        self._slots: list[_Slot] = []
        self._stop = threading.Event()
        self.result = RunResult()
        self.started = time.monotonic()
        self.deadline = None if config.deadline_s is None else self.started + config.deadline_s

    # -- helpers ------------------------------------------------------------------------------------

    def remaining(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def log(self, text: str) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            print(f"[{elapsed:6.1f}s] {text}", file=self.progress, flush=True)

    def timeout_for(self, task: Task) -> float:
        return self.config.compile_timeout_s if task.mode == "compile" else self.config.eager_timeout_s

    def base_row(self, task: Task, slot: _Slot) -> dict[str, Any]:
        c = self.config
        p = task.problem
        return {"problem_id": p.id, "problem_sha256": p.sha256, "level": p.level, "category": p.category,
                "mode": task.mode, "preset": task.preset_name, "device": c.device, "precision": c.precision,
                "budget_s": c.budget_s, "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "device_slot": slot.device_slot, "worker": slot.index,
                "machine": {**slot.environment, **c.host}}

    # -- the work -----------------------------------------------------------------------------------

    def run(self, problems: Iterable[Problem]) -> RunResult:
        c = self.config
        done = finished_keys(read_rows(c.out), c.retry_failed)
        tasks = plan_tasks(problems, c.modes, done, c.preset, c.device, c.precision, c.limit)
        self.result.planned = len(tasks)
        self._total = len(tasks)
        self._finished = 0
        queue = TaskQueue(tasks)
        n_workers = max(1, min(c.workers, len(tasks)))
        if not tasks:
            self.log("nothing left to measure")
            return self.result
        self.log(f"{len(tasks)} task(s) ({sum(t.mode == 'eager' for t in tasks)} eager, "
                 f"{sum(t.mode == 'compile' for t in tasks)} compile) on {n_workers} worker(s), devices "
                 f"{', '.join(device_key(s) for s in c.device_slots)}"
                 + (f", deadline {c.deadline_s:.0f} s" if c.deadline_s is not None else ""))
        self._slots = [_Slot(i, c.device_slots[i % len(c.device_slots)], c) for i in range(n_workers)]
        threads = []
        # the first worker (two, with enough workers) of each device prefer the eager line: quick and GPU-bound,
        # so it is done early and overlaps the long CPU-bound compilations of the others
        eager_lane = len(c.device_slots) * (2 if n_workers >= 4 * len(c.device_slots) else 1)
        for slot in self._slots:
            prefer = "eager" if slot.index < eager_lane or "compile" not in c.modes else "compile"
            t = threading.Thread(target=self._serve, args=(slot, queue, prefer), daemon=True)
            t.start()
            threads.append(t)
        try:
            for t in threads:
                while t.is_alive():
                    t.join(timeout=0.5)
        finally:
            self._stop.set()
            for slot in self._slots:
                slot.stop(polite=False)
        self.result.left = len(queue)
        self.result.wall_s = round(time.monotonic() - self.started, 1)
        return self.result

    def _serve(self, slot: _Slot, queue: TaskQueue, prefer: str) -> None:
        start_failures = 0
        while not self._stop.is_set():
            if self.remaining() <= MIN_START_S:
                return
            task = queue.take(prefer)
            if task is None:
                slot.stop()
                return
            why = self._ensure_worker(slot)
            if why is not None:   # not the problem's fault: the task goes back for another worker or run
                queue.put_back(task)
                start_failures += 1
                self.log(f"worker {slot.index} on {device_key(slot.device_slot)} could not start "
                         f"({start_failures}/{START_FAILURES}): {why[:1000]}")
                if start_failures >= START_FAILURES:
                    return
                continue
            start_failures = 0
            try:
                self._one(slot, task)
            except Exception as exc:  # the runner's own bug must not hang the run: record and go on
                self._record(task, slot, {"status": "error", "reason": f"runner error: {exc!r}"}, 0.0)

    def _ensure_worker(self, slot: _Slot) -> str | None:
        """Start the slot's worker if needed; None on success, else why it could not start."""
        if slot.child is not None and slot.child.proc.poll() is None:
            return None
        slot.stop(polite=False)
        try:
            slot.start(max(1.0, min(HELLO_TIMEOUT_S, self.remaining())))
        except Exception as exc:
            detail = slot.child.output.text(1000) if slot.child is not None else ""
            slot.stop(polite=False)
            return f"{type(exc).__name__}: {exc} {detail}".strip()
        return None

    def _one(self, slot: _Slot, task: Task) -> None:
        c = self.config
        limit = self.timeout_for(task)
        wait = min(limit, self.remaining())
        started = time.monotonic()
        msg = {"cmd": "measure", "problem_path": task.problem.path, "preset": task.preset, "mode": task.mode,
               "device": c.device, "precision": c.precision, "budget_s": c.budget_s,
               "init_seed": secrets.randbits(62), "lock_path": slot.lock_path}
        try:
            reply, _ = slot.child.request(msg, wait)
        except channel.ChannelTimeout:
            slot.stop(polite=False)
            if wait < limit:   # cut by the deadline, not by the task's own limit: leave it for a re-run
                with self._count_lock:
                    self.result.dropped_at_deadline += 1
                self.log(f"deadline: dropped {task.problem.id} {task.mode} (in flight)")
                return
            self._record(task, slot, {"status": "timeout",
                                      "reason": f"no result within {limit:.0f} s ({task.mode}); skipped"},
                         time.monotonic() - started)
            return
        except (channel.ChannelClosed, channel.ProtocolError, OSError) as exc:
            child = slot.child
            how = child.exit_description() if child is not None else "gone"
            detail = child.output.text(1500) if child is not None else ""
            slot.stop(polite=False)
            if self._stop.is_set():
                return
            self._record(task, slot, {"status": "error", "reason": f"the worker died ({how}; {type(exc).__name__})",
                                      "error": detail}, time.monotonic() - started)
            return
        wall = time.monotonic() - started
        if reply.get("restart"):   # the worker's CUDA context is spoilt: the next task gets a fresh process
            slot.stop(polite=False)
        if reply.get("status") == "ok":
            stats = reply.get("timing") or {}
            body = {"status": "ok", "ref_ms": stats.get("median_ms"), "timing": stats}
        else:
            message = str(reply.get("message", "error"))
            body = {"status": "error", "reason": _last_line(message), "error": message[-2000:]}
        for key in ("peak_mem_bytes", "build_s", "compile_s", "first_call_s", "warm_call_s", "lock_wait_s",
                    "lock_held_s", "graph_breaks", "unique_graphs", "recompiled_while_timed", "phase", "oom"):
            if key in reply:
                body[key] = reply[key]
        self._record(task, slot, body, wall)

    def _record(self, task: Task, slot: _Slot, body: dict[str, Any], wall_s: float) -> None:
        row = {**self.base_row(task, slot), "ref_ms": None, **body, "wall_s": round(wall_s, 2)}
        self.writer.append(row)
        with self._count_lock:
            self._finished += 1
            n = self._finished
            status = row["status"]
            if status == "ok":
                self.result.measured += 1
            elif status == "timeout":
                self.result.timed_out += 1
            else:
                self.result.failed += 1
        if status == "ok":
            peak = row.get("peak_mem_bytes")
            extra = f", peak {peak / 2**30:.2f} GiB" if isinstance(peak, (int, float)) else ""
            if row.get("compile_s") is not None:
                extra += f", compile {row['compile_s']:.1f} s"
            what = f"{row['ref_ms']:.4g} ms{extra}"
        else:
            what = f"{status.upper()}: {row.get('reason', '')[:160]}"
        self.log(f"[{n}/{self._total}] {task.problem.id} {task.mode} on {device_key(slot.device_slot)}: {what} "
                 f"({row['wall_s']:.1f} s)")


def _last_line(message: str) -> str:
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "error")[:500]
