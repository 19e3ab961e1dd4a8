"""Profile one call of the solution's model with torch's profiler, inside the solution's child process.

Threat C3 (a decoy kernel runs while a library does the real work): the orchestrator wants to know which
kernels actually carried the time. This module returns plain data only (never torch objects):

    {"device": "cuda" | "cpu", "wall_us": float, "op_us": float,
     "rows": [{"name": str, "chain": [str, ...], "us": float, "calls": int, "kind": str}, ...],
     "rows_left_out": int, "left_out_us": float,
     "busy_us": float, "summed_us": float, "activities": int, "streams": int}

On CUDA each row is device activity (kind "kernel", "memcpy" or "memset") with its device time in
microseconds, each activity counted once, and `chain` holds the CPU ops (outermost first, the launching op
last) that were open when it was launched: a kernel launched inside aten::mm has a chain ending in
"aten::mm"; the solution's own launches have none. `busy_us` is the union of the call's activity intervals
on every stream (worker/busy_time.py): the device clock's profiler figure. On the CPU (no device activity)
each row is an op with its self CPU time and the ops around it; aten ops called from inside a C++ extension
go through the dispatcher and show up here too, and the call's time outside every op (`wall_us - op_us`) is
the solution's own code; `busy_us` there is the union of the ops' intervals.

The orchestrator classifies the rows (analysis/kernels.py). The numbers come from the solution's process,
so they are only ever used as evidence against a solution, never as proof that it is honest.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from kerneljudge.worker import busy_time

MAX_ROWS = 200     # rows sent back, largest first
MAX_NAME = 400     # characters of a kernel or op name
MAX_CHAIN = 6      # ops kept per chain: the outermost and the innermost ones
OWNER_KINDS = frozenset({"cpu_op", "user_annotation"})  # events that can launch device work


def profile_call(model: Any, inputs: list[Any], device: str) -> dict[str, Any]:
    """Run model(*inputs) once under the (kineto) profiler; the summary of what ran. On CUDA the rows are built
    from the profiler's own events (the ops' nesting found here as torch finds it): torch's FunctionEvents took
    up to 16 s per profiled call of a bidirectional recurrent model on the H100. Where those events cannot be
    read or hold no device work, the FunctionEvents serve."""
    prof, wall_us = _profiled_once(model, inputs, device)
    if device == "cuda":
        events = raw_events(prof, device, with_ops=True)
        if events and busy_time.distinct_work(events):
            return summarize(events, device, wall_us)
    return summarize(prof.function_events, device, wall_us)


def busy_of_call(model: Any, inputs: list[Any], device: str) -> dict[str, Any]:
    """Run model(*inputs) once under the profiler; only its busy time, `busy_us`, `summed_us`, `activities` and
    `streams` (the device clock's profiler figure), with `wall_us`. Read from the profiler's own events rather than
    torch's FunctionEvents, whose tree takes about 1.6 s to build per 30,000 events (a recurrent model's call of
    6,144 kernels paid about a second per profiled call on the H100). Where those events yield no work, the
    FunctionEvents are read after all."""
    prof, wall_us = _profiled_once(model, inputs, device)
    events = raw_events(prof, device)
    found = busy_time.busy(events, device) if events else None
    if not found or not found["activities"]:
        return summarize(prof.function_events, device, wall_us)
    return {"device": device, "wall_us": round(max(0.0, wall_us), 3), **found}


def _profiled_once(model: Any, inputs: list[Any], device: str) -> tuple[Any, float]:
    """(the finished profiler, the call's host time in us). torch.autograd.profiler.profile is used rather than
    torch.profiler.profile: the latter imports torch._inductor when it starts, which costs seconds in every fresh
    child."""
    from torch.autograd import profiler

    from kerneljudge.worker import timing

    # exactly one call inside the window: the inputs were made, and every earlier call finished, before it
    # opens; the call's own device work has finished before it closes
    timing.sync(device)
    with profiler.profile(use_kineto=True, use_cpu=True, use_device="cuda" if device == "cuda" else None,
                          record_shapes=False, with_stack=False) as prof:
        started = timing.perf_counter()
        out = model(*inputs)
        timing.sync(device)  # all device work of the call lands inside the profile
        wall_us = (timing.perf_counter() - started) * 1e6
    del out
    return prof, wall_us


@dataclass(frozen=True)
class _Span:
    start: float   # microseconds
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


@dataclass(eq=False)
class RawEvent:
    """What worker/busy_time.py and `summarize` read of an event, taken from one of the profiler's own (kineto)
    events, under the names torch's FunctionEvents give them: `id` is the event's correlation id, and a device
    activity's `linked_correlation_id` is the `id` of the CPU op that launched it."""
    name: str
    device_type: Any
    activity_type: str | None
    device_resource_id: Any
    time_range: _Span
    is_async: bool
    id: int = 0
    linked_correlation_id: int = 0
    thread: int = 0
    cpu_parent: "RawEvent | None" = None


def raw_events(prof: Any, device: str, with_ops: bool = False) -> list[RawEvent] | None:
    """The profiler's own events as RawEvents, left out as torch leaves them out of its FunctionEvents (memory
    records and hidden events) and with its test for asynchronous ones; on "cuda" the device's events only (busy
    time reads nothing else there), unless `with_ops` asks for the CPU's events too, each given its `cpu_parent`.
    None where they cannot be read."""
    try:
        from torch.autograd.profiler_util import _filter_name, _rewrite_name
    except ImportError:   # a torch without them: memory records carry no device work anyway
        def _filter_name(name: str) -> bool:
            return False

        def _rewrite_name(name: str, with_wildcard: bool = False) -> str:
            return name
    try:
        results = prof.kineto_results
        zero = results.trace_start_ns()   # microseconds since the epoch would lose a float's last digits
        found = []
        for ev in results.events():
            if device == "cuda" and not with_ops and busy_time.is_cpu_type(ev.device_type()):
                continue
            if _filter_name(ev.name()) or getattr(ev, "is_hidden_event", lambda: False)():
                continue
            found.append(RawEvent(name=_rewrite_name(ev.name(), with_wildcard=True), device_type=ev.device_type(),
                                  activity_type=_activity_type(ev),
                                  device_resource_id=ev.device_resource_id(),
                                  time_range=_Span((ev.start_ns() - zero) / 1e3, (ev.end_ns() - zero) / 1e3),
                                  is_async=bool(ev.is_async() or ev.start_thread_id() != ev.end_thread_id()),
                                  id=_number(ev, "correlation_id"),
                                  linked_correlation_id=_number(ev, "linked_correlation_id"),
                                  thread=int(ev.start_thread_id())))
    except Exception:   # an API this torch lacks: the FunctionEvents serve
        return None
    if with_ops:
        nest_cpu_ops(found)
    return found


def nest_cpu_ops(events: list[Any]) -> None:
    """Give each synchronous CPU event its `cpu_parent`, as torch nests its FunctionEvents: per thread, in order
    of start (the longer first where two start together), the innermost open event that wholly contains it. The
    CPU events are left sorted that way, so an op sharing its id with a later event is found first, as in torch's
    list."""
    cpu = [ev for ev in events if not busy_time.on_device(ev) and not ev.is_async]
    # a runtime call (cudaLaunchKernel...) is recorded on a thread id of its own; torch moves it to the thread of
    # the op it is linked to, so that it nests inside that op
    thread_of_op = {ev.id: ev.thread for ev in cpu if not ev.linked_correlation_id}
    by_thread: dict[int, list[Any]] = defaultdict(list)
    for ev in cpu:
        linked = ev.linked_correlation_id
        by_thread[thread_of_op.get(linked, ev.thread) if linked else ev.thread].append(ev)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        open_events: list[Any] = []
        for ev in thread_events:
            while open_events and (ev.time_range.start >= open_events[-1].time_range.end
                                   or ev.time_range.end > open_events[-1].time_range.end):
                open_events.pop()
            ev.cpu_parent = open_events[-1] if open_events else None
            open_events.append(ev)
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))


def _number(event: Any, method: str) -> int:
    """An id the event has a method for, else 0 (an op without links: its kernels are found as older torch
    found them)."""
    read = getattr(event, method, None)
    return int(read()) if callable(read) else 0


def _activity_type(event: Any) -> str | None:
    """The event's kineto activity type; None where torch has none to give (2.11, the H100 image's: neither its
    kineto events nor its FunctionEvents carry one, and busy_time then counts whatever ran on the device, as it
    does for those FunctionEvents). Asking for it regardless made every raw read fail there, on 2026-12-07, and
    every profile fall back to the slow FunctionEvents."""
    read = getattr(event, "activity_type", None)
    return read() if callable(read) else None


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
    """Rows from profiler events (torch FunctionEvents, or anything with the same attributes), and the call's
    busy time (worker/busy_time.py). On CUDA every device activity is one row entry, under the op that
    launched it: summing the rows gives each kernel once."""
    events = [e for e in events if not getattr(e, "is_async", False)]
    totals: dict[tuple[str, tuple[str, ...]], list[float]] = defaultdict(lambda: [0.0, 0])
    op_us = 0.0
    if device == "cuda":
        work = busy_time.distinct_work(events)
        owners = launching_ops(events, work)
        for ev in work:
            op = owners.get(id(ev))
            chain = _short_chain(_ancestors(op) + [str(op.name)]) if op is not None else ()
            totals[(str(ev.name), chain)][0] += _elapsed(ev)
            totals[(str(ev.name), chain)][1] += 1
    else:
        for ev in events:
            if busy_time.on_device(ev):
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
            "rows_left_out": len(left), "left_out_us": round(sum(v[0] for _, v in left), 3),
            **busy_time.busy(events, device)}


def launching_ops(events: list[Any], work: list[Any]) -> dict[int, Any]:
    """{id(device activity): the CPU op that launched it}, one op per activity at most.

    The device event names its op (`linked_correlation_id`, the op's `id`); only ops and annotations are
    candidates (events linked to no other event themselves, as torch picks them), so a runtime call that happens
    to share the number is never one. Where the link is missing (older torch), an op's own list of the kernels it
    launched serves, each entry given to one activity only: counting an activity under every event that lists it
    made a profile sum up to twice the device time."""
    ops = [ev for ev in events if not busy_time.on_device(ev) and not getattr(ev, "linked_correlation_id", 0)
           and (getattr(ev, "activity_type", None) is None or str(ev.activity_type) in OWNER_KINDS)]
    by_id: dict[Any, Any] = {}
    for op in ops:
        by_id.setdefault(getattr(op, "id", None), op)
    owners: dict[int, Any] = {}
    unlinked = []
    for ev in work:
        linked = getattr(ev, "linked_correlation_id", 0) or 0
        if linked and linked in by_id:
            owners[id(ev)] = by_id[linked]
        else:
            unlinked.append(ev)
    if unlinked:
        offers: dict[tuple[str, float], list[Any]] = defaultdict(list)
        for op in ops:
            for k in getattr(op, "kernels", None) or []:
                offers[(str(k.name), round(max(0.0, float(getattr(k, "duration", 0.0) or 0.0)), 3))].append(op)
        for ev in unlinked:
            waiting = offers.get((str(ev.name), round(_elapsed(ev), 3)))
            if waiting:
                owners[id(ev)] = waiting.pop(0)
    return owners


def _elapsed(event: Any) -> float:
    return max(0.0, float(event.time_range.elapsed_us()))
