"""Shapes the judge uses for a problem, resolved on the trusted side with shape probe children.

    plan = resolve(problem, cache_dir)          # ShapePlan: small, held_out, held_out_small, source, notes
    plans = resolve_many(problems, cache_dir)   # one probe child for all of them
    plan = resolve(problem, cache_dir, mode="general")   # held-out shapes by another rule (HELD_OUT_MODES)
    plan = resolve(problem, cache_dir, memory_budget=n)  # a preset fitted to n bytes where the default needs more

This module runs the probes and hands out plans: the probe child's client (ShapeWorker, problem code never
runs in this process: worker/shapes.py runs it) and resolve / resolve_many / resolve_concurrently. What they
put together lives beside it: the problem's own presets (shape_presets.py), what its metadata lacks, derived
and checked with probes (shape_derivation.py), and the plan cache (shape_cache.py). A problem with all three
presets (every bundled one) is probed too, once, for its far-below held-out shape; its plan is cached like
any other. A probe crash or timeout gives a plan with nothing derived and a note (never an exception), and
is not cached, so the next run tries again.
"""

from __future__ import annotations

import concurrent.futures
import queue
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core.problem import Problem
from kerneljudge.core.types import HELD_OUT_MODES
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.plan import ShapePlan
from kerneljudge.shapes.scan import Scan, scan_text
from kerneljudge.judging import lint
from kerneljudge.judging import environment
from kerneljudge.judging.child import Child
from kerneljudge.judging.shape_cache import load_plan, plan_path, store_plan
from kerneljudge.judging.shape_derivation import NO_HELD_OUT, derive_plan
from kerneljudge.judging.shape_presets import assemble_plan, metadata_presets

WORKER_MODULE = "kerneljudge.worker.shapes"
CPU_PROBE_MAX_BYTES = 256 << 20     # the probe builds real tensors only when inputs + parameters fit here
VALUES_MAX_BYTES = 64 << 20         # a far-below candidate's output is checked for real up to this size
DEFAULT_MODE = HELD_OUT_MODES[0]    # aligned: held-out sizes keep the benchmark sizes' alignment


class ShapeWorker(lint.LintWorker):
    """The shape probe child, with the lint worker's client: one process for many problems, restarted
    after a crash or a timeout (`starts` counts the processes started)."""

    def _ensure(self) -> Child:
        if self._child is None or self._child.proc.poll() is not None:
            self._discard()
            self._child = Child(WORKER_MODULE, environment.child_env("cpu", self.threads, self.cache_dir))
            self.starts += 1
            self._exchange({"cmd": "ping"}, lint.START_TIMEOUT_S, "starting")
        return self._child


class ProbeFailed(Exception):
    """The probe child crashed or timed out: nothing derived for this problem is trusted."""


class ShapeProber:
    """Probes of one problem in a ShapeWorker, as the derivation asks for them (judging/shape_derivation.py)."""

    def __init__(self, worker: ShapeWorker, path: str, timeout_s: float):
        self.worker, self.path, self.timeout_s = worker, path, timeout_s
        self.last_seconds = 0.0

    def __call__(self, overrides: dict[str, Any], cpu: bool = False, unknown_ok: bool = False,
                 flops: bool = True, values: bool = False, activations: bool = False) -> dict[str, Any]:
        """One probe; `cpu`: also a timed real forward; `unknown_ok`: run on the CPU even when get_inputs()
        cannot be sized without data (asked only at CPU-preset sizes); `flops`: count them; `values`: check
        on the CPU that the output is finite and depends on the inputs; `activations`: measure the largest
        tensor the forward makes (for a judgement's memory need)."""
        try:
            reply = self.worker.request({"cmd": "probe", "problem_path": self.path, "overrides": overrides,
                                         "cpu": cpu, "cpu_max_bytes": CPU_PROBE_MAX_BYTES, "flops": flops,
                                         "cpu_unknown_ok": unknown_ok, "values": values,
                                         "values_max_bytes": VALUES_MAX_BYTES, "activations": activations},
                                        self.timeout_s)
        except lint.WorkerFailure as exc:
            raise ProbeFailed(str(exc).replace("lint worker", "shape probe")) from None
        if reply.get("status") != "ok":
            raise ProbeFailed(f"the probe answered {str(reply.get('message', reply))[:300]}")
        self.last_seconds = float(reply.get("seconds") or 0.0)
        return reply


def resolve(problem: Problem, cache_dir: str | None = None, timeout_s: float = 120.0,
            worker: ShapeWorker | None = None, use_cache: bool = True, mode: str = DEFAULT_MODE,
            memory_budget: int | None = None) -> ShapePlan:
    """The plan for one problem, its held-out shapes by the rule of `mode` (aligned | general | none);
    `memory_budget`: bytes one judgement may need on the device, for a preset fitted to them where the default
    shape needs more (None: no limit, as on the CPU without --device-memory). Never raises for what the problem
    does; starts a probe child only when the problem has size constants and no
    cached plan exists (in `worker` when given, else a fresh one): even a problem with all its metadata is
    probed once, for its far-below held-out shape."""
    if mode not in HELD_OUT_MODES:
        raise ValueError(f"held-out mode must be one of {', '.join(HELD_OUT_MODES)}; got {mode!r}")
    cache_dir = cache_dir or default_cache_dir()
    try:
        text = Path(problem.path).read_text()
        scan = scan_text(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return assemble_plan(metadata_presets(problem, Scan()), {}, [f"cannot read the problem file: {exc}"])
    known = metadata_presets(problem, scan)
    if mode == NO_HELD_OUT:
        known = {k: v for k, v in known.items() if k == "small"}
    try:
        roles = R.classify(scan)
    except Exception as exc:  # a rule bug must not stop judging
        return assemble_plan(known, {}, [f"deriving shapes failed, nothing derived: {type(exc).__name__}: {exc}"])
    if not R.sizes(roles):
        why = "no module-level integer size constants" if not scan.constants else \
            f"no constant is a size ({R.describe(roles, scan)})"
        return assemble_plan(known, {}, [f"nothing to derive: {why}"])
    cache = plan_path(cache_dir, text, mode, memory_budget)
    cached = load_plan(cache) if use_cache else None
    if cached is not None:
        return cached
    own = worker is None
    worker = worker or ShapeWorker(cache_dir)
    try:
        plan = derive_plan(problem, scan, roles, known, ShapeProber(worker, problem.path, timeout_s), mode,
                           memory_budget)
    except ProbeFailed as exc:
        return assemble_plan(known, {}, [f"the shape probe failed, nothing derived: {exc}"])
    except Exception as exc:  # a derivation bug must not stop judging; the note says what happened
        return assemble_plan(known, {}, [f"deriving shapes failed, nothing derived: {type(exc).__name__}: {exc}"])
    finally:
        if own:
            worker.close()
    store_plan(cache, plan)
    return plan


def resolve_many(problems: Iterable[Problem], cache_dir: str | None = None, timeout_s: float = 120.0,
                 use_cache: bool = True, progress: Callable[[str], None] | None = None,
                 mode: str = DEFAULT_MODE, memory_budget: int | None = None) -> list[ShapePlan]:
    """Plans for many problems, probed in ONE child process (started only if some plan must be derived)."""
    cache_dir = cache_dir or default_cache_dir()
    plans = []
    with ShapeWorker(cache_dir) as worker:
        for problem in problems:
            plans.append(resolve(problem, cache_dir, timeout_s, worker, use_cache, mode, memory_budget))
            if progress is not None:
                progress(f"shapes {problem.id}: " + ", ".join(f"{k} {v}" for k, v in plans[-1].source.items()))
    return plans


def resolve_concurrently(problems: Iterable[Problem], cache_dir: str | None = None, probes: int = 1,
                         timeout_s: float = 120.0, mode: str = DEFAULT_MODE,
                         memory_budget: int | None = None) -> Iterator[tuple[Problem, ShapePlan]]:
    """(problem, plan) for many problems, as each is ready: `probes` probe children work side by side (a cold
    plan for an upstream problem takes a few seconds of real forwards on the CPU; 250 of them one after another
    kept a batch from judging anything for ten minutes). Yields in the order the plans finish, which for equal
    probes is about the order given."""
    cache_dir = cache_dir or default_cache_dir()
    idle: queue.Queue[ShapeWorker] = queue.Queue()
    workers = [ShapeWorker(cache_dir) for _ in range(max(1, probes))]
    for worker in workers:
        idle.put(worker)

    def one(problem: Problem) -> tuple[Problem, ShapePlan]:
        worker = idle.get()
        try:
            return problem, resolve(problem, cache_dir, timeout_s, worker, mode=mode, memory_budget=memory_budget)
        finally:
            idle.put(worker)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(workers), thread_name_prefix="kj-shapes") as pool:
            for done in concurrent.futures.as_completed([pool.submit(one, p) for p in problems]):
                yield done.result()
    finally:
        for worker in workers:
            worker.close()
