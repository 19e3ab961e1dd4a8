"""Judging on a Ray cluster: one judging actor per GPU (on a CPU cluster, actors holding CPUs), the driver
keeping the queue and writing the log (run_batch's resumable JSONL, or the service's journal).

    pool = RayPool(JudgeOptions(device="cuda"), address="auto")    # or None: start a local Ray instance
    verdict = pool.submit(problem, "solution.py").result()

Each actor is a JudgeActor: a JudgePool (judging/executors/local.py) with one lane, the GPU Ray gave it (or the CPU),
so inside an actor everything is what a local run does: builds overlap in `workers` threads, one solution
at a time on the device, every solution in its own disposable child process. Jobs travel as texts (problem
and solution), so no shared file system is needed; the actor writes them to a private temporary folder.

An actor that dies (its node lost, its process killed) is restarted by Ray; the driver sends the jobs it
had in flight again (up to `attempts` times each), so a lost worker costs time, never a verdict, and a
verdict is only ever recorded once, by the driver. Ray is an optional extra: pip install 'kerneljudge[ray]'.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

from kerneljudge.core.problem import Problem
from kerneljudge.core.types import JudgeOptions, Verdict
from kerneljudge.judging.executors.local import PoolClosed, default_workers

ATTEMPTS = 3


class JudgeActor:
    """The code of one judging actor (made a Ray actor class by _actor_class)."""

    def __init__(self, options: dict[str, Any], workers: int, build_env: dict[str, str] | None):
        from kerneljudge.judging.executors.local import JudgePool

        self.pool = JudgePool(JudgeOptions(**options), workers=workers, build_env=build_env)

    def describe(self) -> dict[str, Any]:
        import socket

        return {"pid": os.getpid(), "node": socket.gethostname(), "device": self.pool.device,
                "lanes": [lane.name for lane in self.pool.lanes]}

    def warm(self, options: dict[str, Any]) -> None:
        self.pool.warm(JudgeOptions(**options))

    def device_name(self, options: dict[str, Any]) -> str:
        return self.pool.device_name(JudgeOptions(**options))

    def judge(self, problem_text: str, problem_name: str, solution_text: str, options: dict[str, Any]) -> dict:
        import shutil
        import tempfile

        from kerneljudge.core.problem import read_problem

        private = Path(tempfile.mkdtemp(prefix="kj-ray-"))
        try:
            # the problem keeps its folder and file name, so its id (level1/19_x) is what the driver has
            folder, name = problem_name.split("/") if "/" in problem_name else ("problems", problem_name)
            (private / folder).mkdir()
            problem_path = private / folder / name
            problem_path.write_text(problem_text)
            solution = private / "solution" / "solution.py"
            solution.parent.mkdir()
            solution.write_text(solution_text)
            verdict = self.pool.submit(read_problem(problem_path), solution, JudgeOptions(**options)).result()
            return verdict.to_dict()
        finally:
            shutil.rmtree(private, ignore_errors=True)


def _actor_class(ray: Any, device: str, workers: int) -> Any:
    resources = {"num_gpus": 1} if device == "cuda" else {"num_cpus": 1}
    return ray.remote(max_restarts=-1, max_concurrency=workers, **resources)(JudgeActor)


@dataclasses.dataclass
class _Job:
    problem: Problem
    solution_path: str
    problem_text: str
    solution_text: str
    options: JudgeOptions
    future: Future
    on_start: Callable[[], None] | None
    attempts: int = 0


class RayPool:
    """The Executor of judging/executors/base.py on Ray; see the module docstring."""

    def __init__(self, options: JudgeOptions | None = None, address: str | None = None, workers: int | None = None,
                 build_env: dict[str, str] | None = None, actors: int | None = None, attempts: int = ATTEMPTS):
        try:
            import ray
        except ImportError:
            raise RuntimeError("--executor ray needs Ray: pip install 'kerneljudge[ray]'") from None
        self._ray = ray
        self.options = options or JudgeOptions()
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        requested = self.options.device
        self.device = ("cuda" if gpus else "cpu") if requested == "auto" else requested
        if self.device == "cuda" and not gpus:
            raise RuntimeError("--device cuda, but the Ray cluster has no GPU resources")
        count = actors or (gpus if self.device == "cuda" else max(1, int(resources.get("CPU", 1)) // 2))
        self.workers = max(1, workers or default_workers(self.device))
        self.attempts = attempts
        base = dataclasses.asdict(dataclasses.replace(self.options, device=self.device))
        cls = _actor_class(ray, self.device, self.workers)
        self.actors = [cls.remote(base, self.workers, build_env) for _ in range(count)]
        self._in_flight: dict[Any, tuple[int, _Job]] = {}     # object ref -> (actor index, job)
        self._load = [0] * count
        self._judged = [0] * count
        self.resent = 0                                       # jobs sent again after their actor died
        self._up = [True] * count                             # False from an actor's death until it answers
        self._pings: dict[Any, int] = {}                      # ping ref -> actor index
        self._ping_at: dict[int, float] = {}                  # actor index -> when to ping it (again)
        self._waiting: collections.deque[_Job] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._driver = threading.Thread(target=self._drive, name="kj-ray-driver", daemon=True)
        self._driver.start()

    # -- the Executor interface

    def submit(self, problem: Problem, solution_path: str | Path, options: JudgeOptions | None = None,
               on_start: Callable[[], None] | None = None, plan: Any = None) -> "Future[Verdict]":
        """As JudgePool.submit; `plan` is not sent (each actor resolves shapes in its own cache)."""
        opts = dataclasses.replace(options or self.options, device=self.device)
        future: Future = Future()
        job = _Job(problem, str(solution_path), Path(problem.path).read_text(), Path(solution_path).read_text(),
                   opts, future, on_start)
        with self._lock:
            if self._closed:
                raise PoolClosed("the Ray judging pool is closed")
            self._waiting.append(job)
        self._wake.set()
        return future

    def warm(self, options: JudgeOptions | None = None) -> None:
        opts = dataclasses.asdict(dataclasses.replace(options or self.options, device=self.device))
        for actor in self.actors:
            actor.warm.remote(opts)

    def device_name(self, options: JudgeOptions | None = None) -> str:
        opts = dataclasses.asdict(dataclasses.replace(options or self.options, device=self.device))
        return str(self._ray.get(self.actors[0].device_name.remote(opts)))

    def describe(self) -> list[dict[str, Any]]:
        """Where each actor runs: {"pid", "node", "device", "lanes"} (waits for the actors to start)."""
        return self._ray.get([actor.describe.remote() for actor in self.actors])

    def status(self) -> dict[str, Any]:
        with self._lock:
            lanes = [{"device": f"ray-actor-{i}:{self.device}", "busy": self._load[i] > 0, "in_flight": self._load[i],
                      "judged": self._judged[i]} for i in range(len(self.actors))]
            return {"device": self.device, "workers": self.workers, "waiting": len(self._waiting), "lanes": lanes}

    def close(self, wait_s: float = 5.0) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiting, self._waiting = list(self._waiting), collections.deque()
            running = [job for _, job in self._in_flight.values()]
            self._in_flight.clear()
        for job in waiting:
            job.future.cancel()
        for job in running:
            if not job.future.done():
                job.future.set_exception(PoolClosed("the Ray judging pool was closed while this job ran"))
        self._wake.set()
        self._driver.join(timeout=wait_s)
        for actor in self.actors:
            try:
                self._ray.kill(actor)
            except Exception:
                pass
        if self._owns_ray:
            self._ray.shutdown()

    # -- the driver thread: dispatch to actors with room, collect results, resend after an actor's death

    def _drive(self) -> None:
        ray = self._ray
        while True:
            self._ping_down_actors()
            self._dispatch()
            with self._lock:
                if self._closed:
                    return
                refs = list(self._in_flight) + list(self._pings)
            if not refs:
                self._wake.wait(0.5)
                self._wake.clear()
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.2)
            for ref in ready:
                if ref in self._pings:
                    self._pinged(ref)
                else:
                    self._collect(ref)

    def _ping_down_actors(self) -> None:
        now = time.monotonic()
        for index, when in list(self._ping_at.items()):
            if when <= now:
                del self._ping_at[index]
                self._pings[self.actors[index].describe.remote()] = index

    def _pinged(self, ref: Any) -> None:
        index = self._pings.pop(ref)
        try:
            self._ray.get(ref)
        except Exception:   # noqa: BLE001  (still restarting, or gone: ask again in a second)
            self._ping_at[index] = time.monotonic() + 1.0
            return
        with self._lock:
            self._up[index] = True

    def _actor_down(self, index: int) -> None:
        """Called with the lock held: no jobs go to the actor until Ray has restarted it and it answers."""
        if self._up[index]:
            self._up[index] = False
            self._ping_at[index] = time.monotonic() + 0.5

    def _dispatch(self) -> None:
        while True:
            with self._lock:
                if self._closed or not self._waiting:
                    return
                up = [i for i in range(len(self.actors)) if self._up[i]]
                if not up:
                    return
                index = min(up, key=lambda i: self._load[i])
                if self._load[index] >= self.workers:
                    return
                job = self._waiting.popleft()
                self._load[index] += 1
                job.attempts += 1
                first = job.attempts == 1
            if first and job.on_start is not None:
                job.on_start()
            ref = self.actors[index].judge.remote(job.problem_text, _problem_name(job.problem), job.solution_text,
                                                  dataclasses.asdict(job.options))
            with self._lock:
                self._in_flight[ref] = (index, job)

    def _collect(self, ref: Any) -> None:
        ray = self._ray
        with self._lock:
            found = self._in_flight.pop(ref, None)
        if found is None:
            return
        index, job = found
        try:
            verdict = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                ray.exceptions.ObjectLostError) as exc:
            with self._lock:
                self._load[index] -= 1
                self._actor_down(index)
                retry = job.attempts < self.attempts and not self._closed
                if retry:
                    self._waiting.appendleft(job)     # the actor is restarted by Ray; the job goes out again
                    self.resent += 1
            if not retry:
                job.future.set_exception(RuntimeError(f"the judging actor died {job.attempts} time(s) while "
                                                      f"judging this job: {type(exc).__name__}"))
            return
        except Exception as exc:   # noqa: BLE001  (an error inside the actor: handed to the waiting caller)
            with self._lock:
                self._load[index] -= 1
            job.future.set_exception(exc)
            return
        with self._lock:
            self._load[index] -= 1
            self._judged[index] += 1
        verdict["problem"], verdict["solution"] = job.problem.path, str(Path(job.solution_path).resolve())
        if not job.future.done():
            job.future.set_result(Verdict.from_dict(verdict))


def _problem_name(problem: Problem) -> str:
    """The problem's folder and file name ("level1/19_relu.py"): read_problem derives its id from them."""
    path = Path(problem.path)
    return f"{path.parent.name}/{path.name}"
