"""Timing one call honestly, and deciding when enough calls were timed.

One timed call: fresh inputs are made outside the window, L2 is flushed, the whole device is synchronised,
then the window opens (host clock + CUDA event on the current stream), the model runs, the end event is
recorded, and the window closes only once the whole device is idle. If the host clock saw much more than
the event (work on side streams or from threads), the host time is the sample: nothing hidden is free.
The clock functions are bound when this module is imported, before any solution code runs.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable

import torch

from kerneljudge.worker import cudart
from kerneljudge.core.sampling import SamplingPlan, median_ci, summarize  # noqa: F401  (re-exported)

# The clocks and events every timing loop uses, bound at import before solution code runs: a solution that
# patches time.perf_counter or torch.cuda.Event later changes nothing here (threat A4, timer patches).
perf_counter = time.perf_counter
synchronize = torch.cuda.synchronize
event_cls = torch.cuda.Event
event_record = torch.cuda.Event.record
event_elapsed = torch.cuda.Event.elapsed_time

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
            self._start = event_cls(enable_timing=True)
            self._end = event_cls(enable_timing=True)

    def flush(self) -> None:
        """Evict L2: persisting lines back to normal first (A10), then overwrite twice the cache's size."""
        if runtime is not None:
            runtime.reset_persisting_l2()
        self._flush.zero_()

    def time_call(self, fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, dict[str, Any]]:
        if self.device != "cuda":
            t0 = perf_counter()
            out = fn(*inputs)
            host_ms = (perf_counter() - t0) * 1e3
            return out, {"ms": host_ms, "host_ms": host_ms, "event_ms": None, "clock": "host"}
        self.flush()
        synchronize()
        t0 = perf_counter()
        event_record(self._start)
        out = fn(*inputs)
        event_record(self._end)
        synchronize()  # cudaDeviceSynchronize: every stream of the device is idle after this
        host_ms = (perf_counter() - t0) * 1e3
        event_ms = event_elapsed(self._start, self._end)
        hidden = host_ms - event_ms > max(HIDDEN_WORK_ABS_MS, HIDDEN_WORK_REL * event_ms)
        sample = host_ms if hidden else event_ms
        clock = "host+device_idle" if hidden else "cuda_event"
        return out, {"ms": sample, "host_ms": host_ms, "event_ms": event_ms, "clock": clock}


def sync(device: str) -> None:
    if device == "cuda":
        synchronize()
