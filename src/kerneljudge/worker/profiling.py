"""Profile one call of the solution's model with torch's profiler, inside the solution's child process.

Threat C3 (a decoy kernel runs while a library does the real work): the orchestrator wants to know which
kernels actually carried the time. This module returns plain data only (never torch objects):

    {"device": "cuda" | "cpu", "wall_us": float, "op_us": float,
     "rows": [{"name": str, "chain": [str, ...], "us": float, "calls": int, "kind": str}, ...],
     "rows_left_out": int, "left_out_us": float}

On CUDA each row is device activity (kind "kernel", "memcpy" or "memset") with its device time in
microseconds, and `chain` holds the CPU ops (outermost first, the launching op last) that were open when it
was launched: a kernel launched inside aten::mm has a chain ending in "aten::mm"; the solution's own
launches have none. On the CPU (no device activity) each row is an op with its self CPU time and the ops
around it; aten ops called from inside a C++ extension go through the dispatcher and show up here too, and
the call's time outside every op (`wall_us - op_us`) is the solution's own code.

The orchestrator classifies the rows (analysis/kernels.py). The numbers come from the solution's process,
so they are only ever used as evidence against a solution, never as proof that it is honest.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

MAX_ROWS = 200     # rows sent back, largest first
MAX_NAME = 400     # characters of a kernel or op name
MAX_CHAIN = 6      # ops kept per chain: the outermost and the innermost ones


def profile_call(model: Any, inputs: list[Any], device: str) -> dict[str, Any]:
    """Run model(*inputs) once under the (kineto) profiler; the summary of what ran.

    torch.autograd.profiler.profile is used rather than torch.profiler.profile: the latter imports
    torch._inductor when it starts, which costs seconds in every fresh child."""
    from torch.autograd import profiler

    from kerneljudge.worker import timing

    timing.sync(device)
    with profiler.profile(use_kineto=True, use_cpu=True, use_device="cuda" if device == "cuda" else None,
                          record_shapes=False, with_stack=False) as prof:
        started = timing.perf_counter()
        out = model(*inputs)
        timing.sync(device)  # all device work of the call lands inside the profile
        wall_us = (timing.perf_counter() - started) * 1e6
    del out
    return summarize(prof.function_events, device, wall_us)


def _on_device(event: Any) -> bool:
    return str(getattr(event, "device_type", "CPU")).rsplit(".", 1)[-1] != "CPU"


def _ancestors(event: Any) -> list[str]:
    names, parent, hops = [], getattr(event, "cpu_parent", None), 0
    while parent is not None and hops < 200:
        names.append(str(parent.name))
        parent, hops = getattr(parent, "cpu_parent", None), hops + 1
    return names[::-1]


def _short_chain(chain: list[str]) -> tuple[str, ...]:
    if len(chain) > MAX_CHAIN:
        chain = chain[:1] + chain[-(MAX_CHAIN - 1):]
    return tuple(c[:200] for c in chain)


def _kind(name: str) -> str:
    low = name.lower()
    return "memcpy" if low.startswith("memcpy") else "memset" if low.startswith("memset") else "kernel"


def summarize(events: Iterable[Any], device: str, wall_us: float) -> dict[str, Any]:
    """Rows from profiler events (torch FunctionEvents, or anything with the same attributes)."""
    events = [e for e in events if not getattr(e, "is_async", False)]
    totals: dict[tuple[str, tuple[str, ...]], list[float]] = defaultdict(lambda: [0.0, 0])
    op_us = 0.0
    if device == "cuda":
        # every device activity (kernel, memcpy, memset) with its device time ...
        seen: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for ev in events:
            if _on_device(ev):
                seen[str(ev.name)][0] += max(0.0, float(ev.time_range.elapsed_us()))
                seen[str(ev.name)][1] += 1
        # ... attributed to the CPU op that launched it (kineto's correlation; only names that really ran on
        # the device, so a legacy per-op timing entry is never counted twice) ...
        attributed: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for ev in events:
            if _on_device(ev):
                continue
            launched = [k for k in (getattr(ev, "kernels", None) or []) if str(k.name) in seen]
            if launched:
                chain = _short_chain(_ancestors(ev) + [str(ev.name)])
                for k in launched:
                    us = max(0.0, float(getattr(k, "duration", 0.0) or 0.0))
                    totals[(str(k.name), chain)][0] += us
                    totals[(str(k.name), chain)][1] += 1
                    attributed[str(k.name)][0] += us
                    attributed[str(k.name)][1] += 1
        # ... and the rest (launched outside any op: the solution's own launches, Triton, library calls made
        # straight from C++) under an empty chain
        for name, (us, calls) in seen.items():
            rest_us = us - attributed[name][0]
            rest_calls = int(calls - attributed[name][1])
            if rest_us > 1e-3 or rest_calls > 0:
                totals[(name, ())][0] += max(0.0, rest_us)
                totals[(name, ())][1] += max(0, rest_calls)
    else:
        for ev in events:
            if _on_device(ev):
                continue
            us = max(0.0, float(getattr(ev, "self_cpu_time_total", 0.0) or 0.0))
            key = (str(ev.name), _short_chain(_ancestors(ev)))
            totals[key][0] += us
            totals[key][1] += 1
            op_us += us
    ordered = sorted(totals.items(), key=lambda kv: -kv[1][0])
    kept, left = ordered[:MAX_ROWS], ordered[MAX_ROWS:]
    rows = [{"name": name[:MAX_NAME], "chain": list(chain), "us": round(us, 3), "calls": int(calls),
             "kind": _kind(name) if device == "cuda" else "op"} for (name, chain), (us, calls) in kept]
    return {"device": device, "wall_us": round(max(0.0, wall_us), 3), "op_us": round(op_us, 3), "rows": rows,
            "rows_left_out": len(left), "left_out_us": round(sum(v[0] for _, v in left), 3)}
