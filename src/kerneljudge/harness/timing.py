"""Timing one call honestly, and deciding when enough calls were timed.

One timed call: fresh inputs are made outside the window, L2 is flushed, the whole device is synchronised,
then the window opens (host clock + CUDA event on the current stream), the model runs, the end event is
recorded, and the window closes only once the whole device is idle. If the host clock saw much more than
the event (work on side streams or from threads), the host time is the sample: nothing hidden is free.
The clock functions are bound when this module is imported, before any solution code runs.
"""

from __future__ import annotations

import inspect
import math
import time
from typing import Any, Callable

import torch

from . import cudart

_perf_counter = time.perf_counter
_synchronize = torch.cuda.synchronize
_event_cls = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time

# bound at import, before solution code: persisting-L2 lines are reset before every flush (threat A10)
runtime = cudart.Runtime() if torch.cuda.is_available() else None

# host - event gap beyond which we assume work escaped the event window
HIDDEN_WORK_ABS_MS = 0.05
HIDDEN_WORK_REL = 0.10


def clock_identities() -> dict[str, Any]:
    """The functions timing depends on; compared before and after solution code runs.

    Looked up statically, so a classmethod or descriptor compares as the same object every time.
    """
    static = inspect.getattr_static
    return {
        "time.perf_counter": time.perf_counter,
        "time.time": time.time,
        "time.monotonic": time.monotonic,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": static(torch.cuda.Event, "record"),
        "torch.cuda.Event.elapsed_time": static(torch.cuda.Event, "elapsed_time"),
        "torch.cuda.Event.synchronize": static(torch.cuda.Event, "synchronize"),
        "torch.Tensor.__torch_function__": static(torch.Tensor, "__torch_function__"),
        "torch.nn.Module.__call__": static(torch.nn.Module, "__call__"),
        "kerneljudge.cudart.reset_persisting_l2": static(cudart.Runtime, "reset_persisting_l2"),
    }


def tampered(baseline: dict[str, Any]) -> list[str]:
    now = clock_identities()
    return sorted(k for k, v in baseline.items() if now.get(k) is not v)


class Timer:
    def __init__(self, device: str):
        self.device = device
        self._flush = None
        if device == "cuda":
            l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
            self.l2_bytes = l2_bytes
            # twice the real L2, so nothing of the previous call survives
            self._flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")
            self._start = _event_cls(enable_timing=True)
            self._end = _event_cls(enable_timing=True)

    def flush(self) -> None:
        """Evict L2: persisting lines back to normal first (A10), then overwrite twice the cache's size."""
        if runtime is not None:
            runtime.reset_persisting_l2()
        self._flush.zero_()

    def time_call(self, fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, dict[str, Any]]:
        if self.device != "cuda":
            t0 = _perf_counter()
            out = fn(*inputs)
            host_ms = (_perf_counter() - t0) * 1e3
            return out, {"ms": host_ms, "host_ms": host_ms, "event_ms": None, "clock": "host"}
        self.flush()
        _synchronize()
        t0 = _perf_counter()
        _event_record(self._start)
        out = fn(*inputs)
        _event_record(self._end)
        _synchronize()  # cudaDeviceSynchronize: every stream of the device is idle after this
        host_ms = (_perf_counter() - t0) * 1e3
        event_ms = _event_elapsed(self._start, self._end)
        hidden = host_ms - event_ms > max(HIDDEN_WORK_ABS_MS, HIDDEN_WORK_REL * event_ms)
        sample = host_ms if hidden else event_ms
        clock = "host+device_idle" if hidden else "cuda_event"
        return out, {"ms": sample, "host_ms": host_ms, "event_ms": event_ms, "clock": clock}


def sync(device: str) -> None:
    if device == "cuda":
        _synchronize()


def median_ci(samples: list[float]) -> tuple[float, float, float]:
    """Median and a distribution-free 95% confidence interval from order statistics."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    med = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)))
    return med, xs[lo], xs[hi]


class SamplingPlan:
    """Adaptive stopping: warm up until stable, then sample until the median is tight or time is up."""

    def __init__(self, device: str, budget_s: float):
        gpu = device == "cuda"
        self.budget_s = budget_s
        self.min_warmup = 3
        self.max_warmup = 50 if gpu else 10
        self.min_samples = 10 if gpu else 5
        self.max_samples = 2000 if gpu else 200
        self.rel_ci = 0.01 if gpu else 0.03

    def warm(self, recent: list[float], elapsed_s: float) -> bool:
        """True once warm-up can stop: the last three calls agree within 10%, or warm-up used its share."""
        if len(recent) < self.min_warmup:
            return False
        if len(recent) >= self.max_warmup or elapsed_s > 0.25 * self.budget_s:
            return True
        a, b, c = recent[-3:]
        return max(a, b, c) <= 1.1 * min(a, b, c)

    def converged(self, samples: list[float]) -> bool:
        """Enough samples, and the median's 95% interval within the relative target."""
        if len(samples) < self.min_samples:
            return False
        med, lo, hi = median_ci(samples)
        return med > 0 and (hi - lo) / 2 <= self.rel_ci * med

    def done_together(self, series: list[list[float]], elapsed_s: float) -> bool:
        """Stopping rule for several models timed in alternating rounds (elapsed_s: all of them together):
        every median tight, or the shared budget used with enough samples of each, or 5x that budget, or a
        series at its sample cap."""
        budget = self.budget_s * len(series)
        if any(len(s) >= self.max_samples for s in series) or elapsed_s > 5 * budget:
            return True
        if any(len(s) < self.min_samples for s in series):
            return False
        return elapsed_s > budget or all(self.converged(s) for s in series)

    def done(self, samples: list[float], elapsed_s: float) -> bool:
        n = len(samples)
        if n < self.min_samples:
            return elapsed_s > 5 * self.budget_s  # a very slow model: stop at 5x budget
        if n >= self.max_samples or elapsed_s > self.budget_s:
            return True
        med, lo, hi = median_ci(samples)
        return med > 0 and (hi - lo) / 2 <= self.rel_ci * med


def summarize(samples: list[float], warmup_calls: int, clocks: list[str]) -> dict[str, Any]:
    med, lo, hi = median_ci(samples)
    n = len(samples)
    mean = sum(samples) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in samples) / n) if n > 1 else 0.0
    clock = "host+device_idle" if "host+device_idle" in clocks else (clocks[0] if clocks else "host")
    return {
        "median_ms": med, "mean_ms": mean, "min_ms": min(samples), "max_ms": max(samples), "std_ms": std,
        "ci95_low_ms": lo, "ci95_high_ms": hi, "samples": n, "warmup_calls": warmup_calls, "clock": clock,
        "host_clock_samples": sum(c == "host+device_idle" for c in clocks),
    }
