"""Trusted reference processes of one device slot, one per problem, so problems are prepared side by side.

A problem's reference is built on the CPU, as upstream KernelBench builds it (4.3 GB of weights drawn for an
nn.Linear(32768, 32768)), then measured (its workload, its floors) before any solution of it can be checked.
With one reference process per device, that preparation held up every other problem's checks and timing
while the device sat idle. Here each problem gets a process of its own while there is host memory for one:

    pool = ReferencePool(make_service, limit=6)
    pool.prepare(problem_key, path, preset, init_seed)   # in the background, CPU only: no turn on the device
    reference = pool.acquire(problem_key)                # the problem's process (prepared, or cold)
    ...                                                  # expect, check, time: as with one process
    pool.release(reference)

The first process (`general`) is started at once and answers hello and work counts; it also serves the first
problem that asks, so a single judgement starts no second process. At the limit an idle process (the least
recently used) is closed to make room; when every process is busy, the least busy one is shared (a process
keeps several models). Processes start on the build cores (`idle_cores`): while their problem's solution is
timed, judging/solution_run.py pins its process to the quiet timing cores, and back afterwards.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable, ContextManager

from kerneljudge.judging.cores import pin_tree
from kerneljudge.judging.reference import ReferenceError, ReferenceService

# host memory a reference process may need beside the solutions' (torch and a CUDA context, a model being
# built on the CPU before it moves to the device): another process starts only where this much is free
PROCESS_MEMORY_BYTES = 3 << 30
MOST_PROCESSES = 16


def process_limit(device: str, available_bytes: int) -> int:
    """Reference processes per device: one on the CPU (its two cores are the builds'), else as many as free
    host memory allows, at most MOST_PROCESSES."""
    if device != "cuda":
        return 1
    return max(1, min(MOST_PROCESSES, available_bytes // PROCESS_MEMORY_BYTES))


class ReferencePool:
    def __init__(self, make: Callable[[], ReferenceService], limit: int = 1, idle_cores: tuple[int, ...] = ()):
        self._make = make
        self.limit = max(1, limit)
        self.idle_cores = tuple(idle_cores)
        self.general = make()
        if self.idle_cores:
            self.general.cores = self.idle_cores
        self._by_problem: OrderedDict[str, ReferenceService] = OrderedDict()   # least recently used first
        self._users: dict[int, int] = {id(self.general): 0}
        self._preparing: dict[str, threading.Event] = {}   # per problem: set once its last preparation ended
        self._cond = threading.Condition()

    # the general process: the device's description, work counts, and what a single judgement uses
    @property
    def environment(self) -> dict[str, Any]:
        return self.general.environment

    @property
    def env(self) -> dict[str, str]:
        """The general process's environment (a new process gets the slot's, which the caller keeps)."""
        return self.general.env

    def start(self) -> None:
        self.general.start()

    def hello(self) -> dict[str, Any]:
        return self.general.hello()

    def count(self, problem_path: str) -> dict[str, Any]:
        return self.general.count(problem_path)

    # a problem's process
    def acquire(self, problem_key: str) -> ReferenceService:
        """The process of this problem, counted as in use until release(); started if need be."""
        with self._cond:
            service = self._assign(problem_key)
            self._users[id(service)] = self._users.get(id(service), 0) + 1
        service.start()
        return service

    def release(self, service: ReferenceService) -> int:
        """Count one user less; returns how many are left."""
        with self._cond:
            left = self._users[id(service)] = max(0, self._users.get(id(service), 0) - 1)
            self._cond.notify_all()
            return left

    def users(self, service: ReferenceService) -> int:
        """How many judgements use the process now."""
        with self._cond:
            return self._users.get(id(service), 0)

    def park_when_idle(self, service: ReferenceService, turn: Callable[[], ContextManager[Any]]) -> None:
        """In the background, in a `turn` on the device: move the process's models to host memory if no judgement
        uses it by then (a model in use would only come back at once), so idle problems hold no device memory."""
        def work() -> None:
            with turn():
                with self._cond:
                    if self._users.get(id(service)):
                        return
                service.park()
        threading.Thread(target=work, name="kj-reference-park", daemon=True).start()

    def prepare(self, problem_key: str, problem_path: str, preset: dict[str, Any], init_seed: int) -> None:
        """Build the problem's reference model in its process, on the CPU, in a background thread; a failure is
        left for the judgement that needs the model to find (and report)."""
        done = threading.Event()
        with self._cond:
            self._preparing[problem_key] = done

        def work() -> None:
            service = self.acquire(problem_key)
            try:
                service.prepare(problem_path, preset, init_seed)
            except ReferenceError:
                pass
            finally:
                self.release(service)
                done.set()
        threading.Thread(target=work, name="kj-reference-prepare", daemon=True).start()

    def wait_prepared(self, problem_key: str, timeout_s: float | None = None) -> float:
        """Wait for the problem's preparation, if one was started; returns the seconds waited. A judgement waits
        here before its first turn on the device, so that no turn is held while a model is drawn on the CPU (a
        4 GB nn.Linear takes seconds there) and its memory need is known when it is admitted."""
        with self._cond:
            done = self._preparing.get(problem_key)
        if done is None or done.is_set():
            return 0.0
        started = time.monotonic()
        done.wait(timeout_s)
        return time.monotonic() - started

    def _assign(self, problem_key: str) -> ReferenceService:
        if problem_key in self._by_problem:
            self._by_problem.move_to_end(problem_key)
            return self._by_problem[problem_key]
        if self.general not in self._by_problem.values():   # the first problem takes the general process
            return self._keep(problem_key, self.general)
        if len(self._by_problem) >= self.limit:
            idle = next((k for k, s in self._by_problem.items()
                         if not self._users.get(id(s)) and s is not self.general), None)
            if idle is None:   # every process is busy: share the least busy one
                return min(self._by_problem.values(), key=lambda s: self._users.get(id(s), 0))
            self._by_problem.pop(idle).close()
        service = self._make()
        if self.idle_cores:
            service.cores = self.idle_cores
        return self._keep(problem_key, service)

    def _keep(self, problem_key: str, service: ReferenceService) -> ReferenceService:
        self._by_problem[problem_key] = service
        self._users.setdefault(id(service), 0)
        return service

    def close_idle(self, keep: ReferenceService | None = None) -> int:
        """Close every process that serves no judgement now, but `keep` and the general one (their contexts, models
        and cached device memory go with them): while a judgement waits for device memory, and before a reference
        that ran out of it is tried again alone (where park_others then parks the rest). Returns how many."""
        with self._cond:
            idle = [k for k, s in self._by_problem.items()
                    if s is not keep and s is not self.general and not self._users.get(id(s))]
            closing = [self._by_problem.pop(k) for k in idle]
        for service in closing:
            service.close()
        return len(closing)

    def park_others(self, keep: ReferenceService) -> None:
        """Park the models of every process but `keep`, used or not, skipping any busy with a request: called
        when one judgement has the device's memory to itself (no other is admitted, so no other process's model
        is needed on the device before it ends; one needed later moves back)."""
        with self._cond:
            others = {id(s): s for s in [self.general, *self._by_problem.values()] if s is not keep}
        for service in others.values():
            service.park(wait=False)

    def pin(self, service: ReferenceService, cores: tuple[int, ...]) -> None:
        """Move a process to other cores (the timing cores while its solution is timed, then back)."""
        pid = service.pid
        if pid is not None and cores:
            pin_tree(pid, cores)

    def close(self) -> None:
        with self._cond:
            services = [self.general, *(s for s in self._by_problem.values() if s is not self.general)]
            self._by_problem.clear()
        for service in services:
            service.close()
