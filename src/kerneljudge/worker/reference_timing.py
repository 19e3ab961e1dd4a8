"""The reference's timing in its trusted process: warm-up and timed rounds with the solution's own per-call method
(worker/timing.py), which the orchestrator interleaves with the solution's rounds, and the reference timed alone
for baselines. Split from worker/reference.py, which serves the requests.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import torch

from kerneljudge.worker import loading, timing

_timers: dict[str, timing.Timer] = {}
_kept: list[Any] = []   # the last timed call's inputs and output, alive until the next call (see timed_round)


def timer_for(device: str) -> timing.Timer:
    """This process's timer for a device, made once (its L2-flush buffer is allocated with it)."""
    if device not in _timers:
        _timers[device] = timing.Timer(device)
    return _timers[device]


def release() -> None:
    """Let the last timed call's inputs and output go (its judgement is over), and the timers with their L2-flush
    buffers: one is made at the first timing, after the judgement's large tensors came and went, so torch's
    allocator cuts its 100 MiB from a freed block of gigabytes, and while it lives that whole block cannot go back
    to the device (on the H100, processes serving no judgement kept 1.2-8.8 GiB with 0.1 GiB allocated: the
    buffer). The next timing makes a new one."""
    _kept.clear()
    _timers.clear()


def warm(problem: Any, model: torch.nn.Module, timer: timing.Timer, device: str, precision: str,
          budget_s: float) -> list[float]:
    plan = timing.SamplingPlan(device, budget_s)
    times: list[float] = []
    start = time.perf_counter()
    while not plan.warm(times, time.perf_counter() - start):
        inputs = loading.make_inputs(problem, secrets.randbits(62), device, precision)
        times.append(timer.time_call(model, inputs)[1]["ms"])
        del inputs
    return times


def timed_round(problem: Any, model: torch.nn.Module, timer: timing.Timer, device: str, precision: str,
                calls: int) -> dict[str, Any]:
    """`calls` timed calls, each with fresh inputs made the way the solution's process makes its timed ones (a
    random-size pad first, the previous call's inputs and output still alive): the allocator then hands both
    sides memory the same way (keeping nothing alive made the reference's calls ~1.5 us faster on the CPU)."""
    samples: list[float] = []
    overheads: list[float] = []
    clocks: list[str] = []
    for _ in range(max(1, calls)):
        t0 = time.perf_counter()
        pad = torch.empty(secrets.randbelow(1 << 22) + 4096, dtype=torch.uint8, device=device)
        inputs = loading.make_inputs(problem, secrets.randbits(62), device, precision)
        out, t = timer.time_call(model, inputs)
        _kept[:] = [inputs, out]   # the previous call's go now, as the solution's do
        del pad, out, inputs
        samples.append(t["ms"])
        clocks.append(t["clock"])
        overheads.append((time.perf_counter() - t0) * 1e3 - t["host_ms"])
    return {"samples": samples, "overheads": overheads, "clocks": clocks}


def time_locally(problem: Any, model: torch.nn.Module, device: str, precision: str, budget_s: float) -> dict[str, Any]:
    """The reference (or torch.compile) timed alone with the solution's per-call method, for baselines.

    Also reports the per-call overhead outside the window (input generation, flush, sync).
    """
    timer = timer_for(device)
    warmed = warm(problem, model, timer, device, precision, budget_s)
    plan = timing.SamplingPlan(device, budget_s)
    taken: dict[str, list] = {"samples": [], "overheads": [], "clocks": []}
    start = time.perf_counter()
    while not plan.done(taken["samples"], time.perf_counter() - start):
        for key, values in timed_round(problem, model, timer, device, precision, 1).items():
            taken[key] += values
    release()
    stats = timing.summarize(taken["samples"], len(warmed), taken["clocks"])
    stats["overhead_ms"] = timing.median_ci(taken["overheads"])[0]
    return {"timing": stats}
