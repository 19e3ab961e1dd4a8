"""A long-lived judging pool: solutions build in parallel, then take turns on the devices.

    with JudgePool(JudgeOptions(device="cuda")) as pool:
        future = pool.submit(problem, "solution.py")      # concurrent.futures.Future[Verdict]
        verdict = future.result()

One lane per device: per visible GPU (or the one CPU) its turns (judging/device/turns.py) and its trusted reference
processes (per precision/threads/cache a job asks for, one per problem as far as host memory allows:
judging/device/reference_pool.py). A job's problem starts being prepared there (its model built on the CPU) as soon as
a worker takes the job, alongside the solution's build. A fixed number of daemon
worker threads take jobs in the order they were submitted; each picks the least busy lane, builds the
solution (that part runs alongside other builds) and then waits for turns on the lane's device: a few
solutions may be checked there at once, one at a time is timed, as judging/solution_run.py enforces. Builds and
runs happen in disposable child processes; this process never imports a solution.

Any number of GPUs: the lanes are the GPUs in CUDA_VISIBLE_DEVICES (or all that torch counts), or those
passed as `gpus`. A solution's child and the lane's reference process see only their lane's GPU.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import secrets
import signal
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Sequence

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core.problem import Problem
from kerneljudge.core.types import JudgeOptions, Verdict
from kerneljudge.judging import environment
from kerneljudge.judging.evaluate import evaluate, judged_preset
from kerneljudge.judging.device.memory import DeviceMemory
from kerneljudge.judging.device.reference_pool import process_limit
from kerneljudge.judging.device.slots import Slot, device_turns, make_slots
from kerneljudge.judging.device.turns import CHECKS_AT_ONCE_GPU


CHILD_MARK = "KJ_POOL_CHILD"


def kill_marked_children(mark: str) -> int:
    """SIGKILL the process groups of this user's processes whose environment holds `mark` (NAME=VALUE):
    the children a closed pool had started. Linux only (/proc); elsewhere nothing is done. Returns how many."""
    needle = mark.encode() + b"\0"
    killed = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read() + b"\0":
                    continue
            group = os.getpgid(int(entry))
            if group == os.getpgrp():      # never this process's own group
                continue
            os.killpg(group, signal.SIGKILL)
            killed += 1
        except (OSError, ProcessLookupError):
            continue
    return killed


class PoolClosed(RuntimeError):
    """The pool was closed before (or while) the job was judged; its verdict, if any, is not to be trusted."""


def device_count(device: str) -> int:
    if device != "cuda":
        return 1
    import torch

    return max(1, torch.cuda.device_count())


def visible_gpus() -> list[str]:
    """The GPU ids this process may hand out, one lane each."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip():
        return [d.strip() for d in visible.split(",") if d.strip()]
    return [str(i) for i in range(device_count("cuda"))]


def default_workers(device: str) -> int:
    """Solutions in flight at once: every core on a GPU machine (builds overlap), two on the CPU (the
    judged run shares the cores with the builds there). Twice the cores on the H200 made the first wave of
    builds slower (86-90 s against 63-70 s; docs/evidence/2026-12-02-h200-device-turns.md)."""
    cores = os.cpu_count() or 1
    return cores if device == "cuda" else min(2, cores)


class Lane:
    """One device: whose turn it is there, the environment its children get, its judged count."""

    def __init__(self, device: str, gpu: str | None, build_env: dict[str, str], options: JudgeOptions):
        self.device = device
        self.gpu = gpu
        self.env = dict(build_env)
        if gpu is not None:
            self.env["CUDA_VISIBLE_DEVICES"] = gpu
        # the card's own memory account; until a slot set is made, the idle reference processes to close while a
        # judgement waits for memory are not known (SlotSets.get names them)
        self.reclaimers: list[Callable[[DeviceMemory], Any]] = []
        self.turns = device_turns(device, self.env, options, self._reclaim)
        self.assigned = 0            # jobs of this lane being built or judged
        self.judged = 0

    def _reclaim(self, memory: DeviceMemory) -> None:
        for reclaim in list(self.reclaimers):
            reclaim(memory)

    @property
    def name(self) -> str:
        return f"cuda:{self.gpu}" if self.gpu is not None else self.device

    def status(self) -> dict[str, Any]:
        return {"device": self.name, "busy": self.turns.busy(), **self.turns.status(),
                "in_flight": self.assigned, "judged": self.judged}


class SlotSets:
    """Per set of options that need their own reference process (precision, threads, cache, core layout): one
    Slot per lane, made by slots.make_slots (its core layout), each holding its lane's turns and GPU, so
    a device times one solution at a time whatever the options."""

    def __init__(self, device: str, lanes: list[Lane], build_env: dict[str, str]):
        self.device, self.lanes, self.build_env = device, lanes, build_env
        self._sets: dict[tuple[Any, ...], list[Slot]] = {}
        self._lock = threading.Lock()

    def get(self, options: JudgeOptions) -> list[Slot]:
        cache = options.cache_dir or default_cache_dir()
        key = (options.precision, options.threads, cache, options.reserved_cores)
        with self._lock:
            slots = self._sets.get(key)
            if slots is None:
                slots = make_slots(self.device, options, len(self.lanes), self.build_env,
                                   references=process_limit(self.device, environment.available_memory()))
                for slot, lane in zip(slots, self.lanes):
                    slot.turns = lane.turns
                    lane.reclaimers.append(slot.reference.reclaim)
                    for env in (slot.env, slot.reference.env):   # the lane's GPU, whatever the index gave
                        env.update(lane.env)
                slots = self._sets[key] = slots
            return slots

    def warm(self, options: JudgeOptions) -> None:
        """Start the reference processes while the first solutions build; an error reaches the first verdict
        that needs the reference."""
        for slot in self.get(options):
            threading.Thread(target=_hello, args=(slot,), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            slots = [slot for group in self._sets.values() for slot in group]
        for slot in slots:
            slot.reference.close()


def _hello(slot: Slot) -> None:
    with slot.turns.shared(limit=CHECKS_AT_ONCE_GPU):
        try:
            slot.reference.hello()
        except Exception:
            pass


@dataclasses.dataclass
class _Job:
    problem: Problem
    solution_path: str
    options: JudgeOptions
    future: Future
    on_start: Callable[[], None] | None
    plan: Any = None


class JudgePool:
    """Judge solutions on this machine's devices; see the module docstring."""

    def __init__(self, options: JudgeOptions | None = None, workers: int | None = None,
                 gpus: Sequence[str] | None = None, build_env: dict[str, str] | None = None):
        self.options = options or JudgeOptions()
        self.device = environment.resolve_device(self.options.device)
        self.workers = max(1, workers or default_workers(self.device))
        cores = os.cpu_count() or 1
        # a CUDA load_inline build has two compile jobs (the C++ binding and the .cu file): let both run at once
        env = {"MAX_JOBS": str(max(2, cores // self.workers))}
        env.update(build_env or {})
        # a mark in every child's environment, so that close() can find the children of judgements it cut
        # short (evaluate() owns them and would only kill them at its next time limit)
        self._mark = f"{CHILD_MARK}={secrets.token_hex(8)}"
        env[CHILD_MARK] = self._mark.split("=", 1)[1]
        if self.device == "cuda":
            ids = list(gpus) if gpus else visible_gpus()
            self.lanes = [Lane("cuda", gpu, env, self.options) for gpu in ids]
        else:
            self.lanes = [Lane(self.device, None, env, self.options)]
        self.slots = SlotSets(self.device, self.lanes, env)
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._queued = 0
        self._threads = [threading.Thread(target=self._work, name=f"kj-pool-{i}", daemon=True)
                         for i in range(self.workers)]
        for t in self._threads:
            t.start()

    # -- submitting

    def submit(self, problem: Problem, solution_path: str | Path, options: JudgeOptions | None = None,
               on_start: Callable[[], None] | None = None, plan: Any = None) -> "Future[Verdict]":
        """Queue one solution; the future gets its Verdict (or OSError for an unreadable file, PoolClosed
        when the pool is closed first). on_start is called in the worker thread when judging begins; plan is
        the problem's shape plan (judging/shapes.py) when the caller resolved it, else evaluate() does."""
        opts = self._options_for(options)
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise PoolClosed("the judging pool is closed")
            self._queued += 1
            self._jobs.put(_Job(problem, str(solution_path), opts, future, on_start, plan))
        return future

    def _options_for(self, options: JudgeOptions | None) -> JudgeOptions:
        opts = options or self.options
        if environment.resolve_device(opts.device) != self.device:
            raise ValueError(f"this pool judges on {self.device}; a job asked for {opts.device}")
        return dataclasses.replace(opts, device=self.device)

    def warm(self, options: JudgeOptions | None = None) -> None:
        """Start every lane's reference process in the background (for these options)."""
        self.slots.warm(self._options_for(options))

    def device_name(self, options: JudgeOptions | None = None) -> str:
        """The first lane's device name, from its reference process (started if need be)."""
        slot = self.slots.get(self._options_for(options))[0]
        with slot.turns.shared(limit=CHECKS_AT_ONCE_GPU):
            return str(slot.reference.hello().get("device_name", ""))

    # -- the workers

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            with self._lock:
                self._queued -= 1
            if not job.future.set_running_or_notify_cancel():
                continue
            index = self._pick_lane()
            lane = self.lanes[index]
            try:
                if job.on_start is not None:
                    job.on_start()
                slot = self.slots.get(job.options)[index]
                self._prepare(slot, job)
                verdict = evaluate(job.problem, job.solution_path, job.options, slot, self.device, job.plan)
            except BaseException as exc:  # handed to whoever waits on the future, never fatal here
                job.future.set_exception(exc)
                continue
            finally:
                with self._lock:
                    lane.assigned -= 1
            if self._closed:   # the pool was closed under it: its reference may have died mid-judgement
                job.future.set_exception(PoolClosed("the judging pool was closed while this job ran"))
                continue
            with self._lock:
                lane.judged += 1
            job.future.set_result(verdict)

    def _prepare(self, slot: Slot, job: _Job) -> None:
        """Start building the job's reference model while the solution builds (only where the caller resolved
        the problem's shapes: the preset must be known)."""
        if job.plan is None:
            return
        _, preset = judged_preset(job.problem, job.plan, job.options, self.device)
        slot.reference.prepare(job.problem.sha256, job.problem.path, preset, slot.init_seed(job.problem))

    def _pick_lane(self) -> int:
        with self._lock:
            index = min(range(len(self.lanes)), key=lambda i: self.lanes[i].assigned)
            self.lanes[index].assigned += 1
            return index

    # -- state

    @property
    def closed(self) -> bool:
        return self._closed

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {"device": self.device, "workers": self.workers, "waiting": self._queued,
                    "lanes": [lane.status() for lane in self.lanes]}

    def close(self, wait_s: float = 5.0) -> None:
        """Stop: queued jobs are cancelled, running ones end with PoolClosed (their children are killed when
        their reference process goes), reference processes are closed."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queued = 0
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.future.cancel()
        for _ in self._threads:
            self._jobs.put(None)
        self.slots.close()
        for t in self._threads:
            t.join(timeout=wait_s / max(1, len(self._threads)))
        self.slots.close()   # again: a judgement that was ending may have restarted one
        kill_marked_children(self._mark)

    def __enter__(self) -> "JudgePool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
