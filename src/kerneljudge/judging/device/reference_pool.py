"""Trusted reference processes of one device slot, one per problem, so problems are prepared side by side.

A problem's reference is built on the CPU, as upstream KernelBench builds it (4.3 GB of weights drawn for an
nn.Linear(32768, 32768)), then measured (its workload, its floors) before any solution of it can be checked.
With one reference process per device, that preparation held up every other problem's checks and timing
while the device sat idle. Here each problem gets a process of its own while there is host memory for one:

    pool = ReferencePool(make_service, limit=6)
    pool.prepare(problem_key, path, preset, init_seed)   # in the background, CPU only: no turn on the device
    reference = pool.acquire(problem_key)                # the problem's process (prepared, or cold)
    ...                                                  # expect, check, time: as with one process
    pool.entered(reference, problem_path)                # admitted to the device (judging/device/turns.py)
    pool.left(reference, problem_path, memory)           # left it: gives back what no admitted judgement uses
    pool.release(reference)

The first process (`general`) is started at once and answers hello and work counts; it also serves the first
problem that asks, so a single judgement starts no second process. At the limit an idle process (the least
recently used) is closed to make room; when every process is busy, the least busy one is shared (a process
keeps several models). Processes start on the build cores (`idle_cores`): while their problem's solution is
timed, judging/solution_run.py pins its process to the quiet timing cores, and back afterwards.

Device memory: a process holds it only for the admitted judgements it serves. When a judgement leaves the device,
its process parks the models no admitted judgement of it still uses; one that then serves none and still holds
more than its context (as the device's own list says, or torch inside it) is closed, and said so on stderr with
what it kept. While a judgement waits for memory, processes that serve no admitted judgement are closed
(reclaim); for a judgement tried again alone, every other process is (close_all_but).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, OrderedDict
from typing import Any, Callable

from kerneljudge.judging.cores import pin_tree
from kerneljudge.judging.device.memory import RESIDUAL_BYTES, DeviceMemory
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
        self._on_device: dict[int, Counter[str]] = {}       # per process: its admitted judgements, by problem path
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

    # device memory
    def entered(self, service: ReferenceService, problem_path: str) -> None:
        """A judgement of this problem served by this process was admitted to the device."""
        with self._cond:
            self._on_device.setdefault(id(service), Counter())[problem_path] += 1

    def left(self, service: ReferenceService, problem_path: str, memory: DeviceMemory | None = None) -> None:
        """That judgement is leaving the device (called while it still has its turn, so that what the process gives
        back is back before the next judgement is admitted): give_back."""
        with self._cond:
            on_device = self._on_device.setdefault(id(service), Counter())
            on_device[problem_path] -= 1
            if on_device[problem_path] <= 0:
                del on_device[problem_path]
        self.give_back(service, memory)

    def serving(self, service: ReferenceService) -> tuple[str, ...]:
        """The problems of the admitted judgements this process serves."""
        with self._cond:
            return tuple(self._on_device.get(id(service), ()))

    def give_back(self, service: ReferenceService, memory: DeviceMemory | None = None) -> bool:
        """Park the process's models that no admitted judgement uses; where it then serves none and still holds more
        than a context (the device's figure for it, or torch's own inside it), close it. True if closed."""
        keep = self.serving(service)
        reply = service.park(keep=keep)
        if keep or service.pid is None:
            return False
        held = memory.held_by([service.pid], fresh=True) if memory is not None else None
        allocated = (reply or {}).get("allocated_bytes") or 0
        if (held or 0) <= RESIDUAL_BYTES and allocated <= RESIDUAL_BYTES // 2:
            return False
        if self.serving(service):   # a judgement it serves was admitted meanwhile: its state stays
            return False
        reserved = (reply or {}).get("reserved_bytes") or 0
        # torch's reserved figure beside its allocated one says whether torch's cache or something outside it
        # (a graph's pool, a library's workspace) is what stays: on the H100, 6.7 GiB listed, 0.1 GiB allocated
        print(f"kerneljudge: a reference process kept {max(held or 0, allocated) / 2**30:.1f} GiB on the device "
              f"serving no judgement there (torch: {allocated / 2**30:.1f} GiB allocated, "
              f"{reserved / 2**30:.1f} GiB reserved, tensors "
              f"{', '.join((reply or {}).get('largest_tensors') or []) or 'unknown'}, "
              f"{(reply or {}).get('dropped_expected', 0)} expected outputs dropped); closed it", file=sys.stderr)
        service.close()
        return True

    def reclaim(self, memory: DeviceMemory | None = None) -> int:
        """While a judgement waits for device memory: close the processes that serve no admitted judgement and
        either serve none at all (idle, but the general one: these are forgotten) or hold more than a context on
        the device (their waiting judgements start them again). Returns how many were closed."""
        with self._cond:
            off_device = [s for s in dict.fromkeys([self.general, *self._by_problem.values()])
                          if not self._on_device.get(id(s))]
            unused = {id(s) for s in off_device if s is not self.general and not self._users.get(id(s))}
            for key in [k for k, s in self._by_problem.items() if id(s) in unused]:
                self._by_problem.pop(key)
        closed = 0
        for service in off_device:
            # looked at again here: closing the processes before it may have taken seconds, and a judgement it
            # serves been admitted meanwhile (its expected outputs would go with the process)
            if self.serving(service):
                continue
            held = memory.held_by([service.pid]) if memory is not None and service.pid else None
            if id(service) in unused or (held or 0) > RESIDUAL_BYTES:
                service.close()
                closed += 1
        return closed

    def close_all_but(self, keep: ReferenceService) -> list[int]:
        """Close every process but `keep`, busy or not (a request in flight finishes first): for a judgement tried
        again alone, which must have the device to itself. Idle ones are forgotten, busy ones start again on their
        next request. Returns the ids of the processes closed."""
        with self._cond:
            others = [s for s in dict.fromkeys([self.general, *self._by_problem.values()]) if s is not keep]
            for key in [k for k, s in self._by_problem.items() if s is not keep and s is not self.general
                        and not self._users.get(id(s))]:
                self._by_problem.pop(key)
        closed = [service.pid for service in others if service.pid is not None]
        # side by side: each waits for its request in flight (a model drawn on the CPU, say), and the device is
        # this judgement's alone meanwhile
        closing = [threading.Thread(target=service.close, name="kj-close-reference", daemon=True) for service in others]
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        return closed

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
            service.close(wait=False)
