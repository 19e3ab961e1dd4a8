"""How long the device was busy with one profiled call: the union of its activities' [start, end) intervals.

Summing the durations of a call's kernels is not its device time: kernels that overlap (concurrent streams)
count twice, and so does any activity the profiler lists twice. The time the device spent on the call is the
length of the union of the intervals of its kernels, copies and fills, on every stream. On the CPU (no device
activity) the same union over the call's ops gives the time spent inside torch ops.

Events are torch's profiler FunctionEvents, or anything with `name`, `device_type`, `time_range.start` and
`.end` (microseconds) and, where known, `activity_type` and `device_resource_id` (the stream). This module
does not import torch: the tests feed it synthetic events.
"""

from __future__ import annotations

from typing import Any, Iterable

# kineto's activity types that are work of the device itself; "gpu_user_annotation" (a span drawn around the
# kernels of a record_function) and "cuda_sync" (time spent waiting) are on the device's track but are no work
DEVICE_WORK = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
CPU_OPS = frozenset({"cpu_op"})


def on_device(event: Any) -> bool:
    """The event happened on an accelerator (its device type is anything but CPU)."""
    return not is_cpu_type(getattr(event, "device_type", "CPU"))


def is_cpu_type(device_type: Any) -> bool:
    """A profiler device type (torch's DeviceType, or its name) that is the CPU."""
    return str(device_type).rsplit(".", 1)[-1] == "CPU"


def is_device_work(event: Any) -> bool:
    """A kernel, copy or fill on the device; events without an activity type (older torch) count when on a
    device."""
    kind = getattr(event, "activity_type", None)
    return on_device(event) and (kind is None or str(kind) in DEVICE_WORK)


def is_cpu_op(event: Any) -> bool:
    kind = getattr(event, "activity_type", None)
    return not on_device(event) and (kind is None or str(kind) in CPU_OPS) and not getattr(event, "is_async", False)


def interval(event: Any) -> tuple[float, float] | None:
    """(start, end) in microseconds, or None when the event carries no usable time range."""
    span = getattr(event, "time_range", None)
    start, end = getattr(span, "start", None), getattr(span, "end", None)
    if not isinstance(start, (int, float)) or not isinstance(end, (int, float)) or end < start:
        return None
    return float(start), float(end)


def distinct_work(events: Iterable[Any]) -> list[Any]:
    """The device work among `events`, each activity once: an entry listed twice (same name, stream and
    interval) is one activity. One without a time range is kept as it is."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for ev in events:
        if not is_device_work(ev):
            continue
        span = interval(ev)
        key = (str(getattr(ev, "name", "")), getattr(ev, "device_resource_id", None), span) if span else (id(ev),)
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


def union_us(spans: Iterable[tuple[float, float]]) -> float:
    """The total length of the union of [start, end) intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end <= reach:
            continue                      # wholly inside what is counted already
        total += end - max(start, reach)
        reach = end
    return total


def busy(events: Iterable[Any], device: str) -> dict[str, Any]:
    """{"busy_us": union of the call's intervals, "summed_us": their plain sum, "activities", "streams"}:
    device work on "cuda", torch ops on "cpu". busy_us < summed_us means overlap or double listing."""
    events = list(events)
    if device == "cuda":
        chosen = distinct_work(events)
    else:
        chosen = [ev for ev in events if is_cpu_op(ev) and interval(ev) is not None]
    spans = [s for s in (interval(ev) for ev in chosen) if s is not None]
    streams = {getattr(ev, "device_resource_id", None) for ev in chosen}
    return {"busy_us": round(union_us(spans), 3), "summed_us": round(sum(e - s for s, e in spans), 3),
            "activities": len(spans), "streams": len(streams) if device == "cuda" else 0}
