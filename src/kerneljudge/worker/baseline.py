"""Child process that measures reference baselines: eager and torch.compile times, peak memory.

Runs only problem code (never solution code), one problem at a time, many in a row. Timing uses the
judge's own method (reference_timing.time_locally) and happens only while this process holds the
device's cross-process lock (core/device_lock.py), so timings of several workers sharing a GPU never
overlap. Everything else -- loading, building, the eager peak-memory call and, above all, torch.compile's
CPU-bound compilation (the first compiled calls) -- runs outside the lock, in parallel with other workers.

Commands (one JSON frame each way):
  hello    pin the judge's global flags (no TF32, no grad, thread count); import the compiler stack now
           when asked, so the first task does not pay for it; reply with the environment
  measure  {problem_path, preset, mode: eager|compile, device, precision, budget_s, init_seed, lock_path}
           -> {timing, peak_mem_bytes, build_s, compile_s, first_call_s, lock_wait_s, ...}

    python -m kerneljudge.worker.baseline FD_IN FD_OUT
"""

from __future__ import annotations

import gc
import os
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from kerneljudge.core import channel
from kerneljudge.worker import loading, common as worker
from kerneljudge.core.device_lock import DeviceLock
from kerneljudge.worker.reference_timing import time_locally

WARM_CALLS = 2   # compiled calls before the lock: the first compiles, the second must not recompile

# torch.compile's first calls run in this thread, lowered in priority (niceness is per thread on Linux, and
# the compiler's helper processes inherit it), so that the timing loop -- in the main thread, at normal
# priority -- is not starved of CPU by this or other workers' compilations.
_compile_thread: ThreadPoolExecutor | None = None


def _compile_thread_setup(nice: int) -> None:
    torch.set_grad_enabled(False)   # grad mode is per thread; dynamo guards on it
    if nice:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
        except (OSError, AttributeError):
            pass


def _in_compile_thread(fn):
    global _compile_thread
    if _compile_thread is None:
        _compile_thread = ThreadPoolExecutor(1, initializer=_compile_thread_setup, initargs=(_nice,))
    return _compile_thread.submit(fn).result()


_nice = 0


def handle_hello(msg: dict[str, Any], fd: int) -> None:
    global _nice
    started = time.perf_counter()
    _nice = int(msg.get("compile_nice", 0))
    flags = worker.pin_global_flags(msg["device"], msg.get("threads", 1))
    env = worker.environment(msg["device"])
    if msg.get("preload_compiler"):
        try:
            import torch._dynamo  # noqa: F401
            import torch._inductor.compile_fx  # noqa: F401
        except Exception:   # only a head start: the first compilation imports what it needs
            pass
    if msg["device"] == "cuda":
        torch.cuda.init()
    channel.send(fd, {"status": "ok", "environment": env, "flags": flags, "pid": os.getpid(),
                      "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                      "start_s": round(time.perf_counter() - started, 3)})


def _free(device: str) -> None:
    gc.collect()
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def _memory_mark(device: str) -> int | None:
    if device != "cuda":
        return None
    _free(device)
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def _peak_since(device: str, mark: int | None) -> int | None:
    if device != "cuda" or mark is None:
        return None
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated() - mark)


def _compiler_counters() -> dict[str, int]:
    try:
        from torch._dynamo.utils import counters

        return {"graph_breaks": int(sum(counters["graph_break"].values())),
                "unique_graphs": int(counters["stats"].get("unique_graphs", 0))}
    except Exception:
        return {}


def measure(msg: dict[str, Any]) -> dict[str, Any]:
    device, precision, mode = msg["device"], msg["precision"], msg["mode"]
    seed = int(msg.get("init_seed") or secrets.randbits(62))
    reply: dict[str, Any] = {"mode": mode}
    phase = "build"
    model = compiled = problem = None
    try:
        if mode == "compile":
            torch._dynamo.reset()   # forget the previous problem's graphs ...
            from torch._dynamo.utils import counters

            counters.clear()        # ... and its graph-break and graph counts
        mark = _memory_mark(device)
        t0 = time.perf_counter()
        problem = loading.load_module(msg["problem_path"], msg.get("preset"))
        init_inputs = loading.make_init_inputs(problem, seed)
        model = loading.build_model(problem.Model, init_inputs, seed, device, precision)
        del init_inputs
        if device == "cuda":
            torch.cuda.synchronize()   # building is part of build_s
        reply["build_s"] = round(time.perf_counter() - t0, 4)

        target = model
        if mode == "eager":
            phase = "first_call"
            inputs = loading.make_inputs(problem, secrets.randbits(62), device, precision)
            t0 = time.perf_counter()
            out = worker.call_model(model, inputs, device)
            reply["first_call_s"] = round(time.perf_counter() - t0, 4)
            del out, inputs
            reply["peak_mem_bytes"] = _peak_since(device, mark)
        else:
            phase = "compile"
            compiled = torch.compile(model)
            calls = []

            def warm_call() -> float:  # runs before the `del` in `finally`, which ruff's F821 misreads
                inputs = loading.make_inputs(problem, secrets.randbits(62), device, precision)  # noqa: F821
                t0 = time.perf_counter()
                worker.call_model(compiled, inputs, device)  # noqa: F821
                return time.perf_counter() - t0

            for _ in range(int(msg.get("warm_calls", WARM_CALLS))):
                calls.append(_in_compile_thread(warm_call))
            reply["compile_s"] = round(calls[0], 4) if calls else None
            reply["first_call_s"] = reply["compile_s"]
            reply["warm_call_s"] = [round(c, 4) for c in calls[1:]]
            reply["peak_mem_bytes"] = _peak_since(device, mark)
            target = compiled

        phase = "timing"
        graphs_before = _compiler_counters().get("unique_graphs") if mode == "compile" else None
        lock = DeviceLock(msg["lock_path"])
        lock.acquire()
        try:
            stats = time_locally(problem, target, device, precision, float(msg["budget_s"]))["timing"]
        finally:
            lock.release()
        reply.update(timing=stats, lock_wait_s=round(lock.wait_s, 4), lock_held_s=round(lock.held_s, 4))
        if mode == "compile":
            reply.update(_compiler_counters())
            if graphs_before is not None and reply.get("unique_graphs", 0) > graphs_before:
                reply["recompiled_while_timed"] = True
        reply["status"] = "ok"
    except Exception as exc:
        reply.update(status="error", phase=phase, message=worker.error_message(exc))
        if "OutOfMemoryError" in type(exc).__name__ or "out of memory" in str(exc):
            reply["oom"] = True
        elif device == "cuda" and ("CUDA error" in str(exc) or "AcceleratorError" in type(exc).__name__):
            reply["restart"] = True   # a sticky CUDA error spoils this process for every later problem
    finally:
        del model, compiled, problem
        try:
            if mode == "compile":
                torch._dynamo.reset()
            _free(device)
        except Exception as exc:
            reply["restart"] = True
            if reply.get("status") == "ok":
                reply.update(status="error", phase="cleanup", message=worker.error_message(exc))
    return reply


def handle_measure(msg: dict[str, Any], fd: int) -> None:
    channel.send(fd, measure(msg))


def main() -> None:
    worker.serve({"hello": handle_hello, "measure": handle_measure})


if __name__ == "__main__":
    main()
