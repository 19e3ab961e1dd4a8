"""Which method measures both sides' device time, and how far a side's two device clocks and its end-to-end
clock agree. Pure functions of the figures the two processes sent (judging/timed.py asks for them).

Every device-time measurement brings two figures for its side (worker/device_clock.py): graph replays, and
the profiler's busy time of single calls, taken before the capture. They measure the same thing, the device
time of one forward without the host's launches, so each side reports how well they agree (`checks`):

* the profiler against the graph replays: within PROFILER_VS_GRAPH (3%) where both exist;
* the profiler against the end-to-end median (the eager calls of the interleaved rounds, launches included):
  one call's device work lies inside its end-to-end window, so the profiler may exceed that median only by
  its own instrumentation's slowdown (PROFILER_OVER_END_TO_END). A profiler figure above that counted what
  one call does not run, and is not used as a clock.

Both sides are measured the same way, or the ratio is no speedup (a summed profile against a graph replay put
an identity copy at 1.72x): by graph replays where both could be captured and replayed as fast as their eager
calls, else by the profiler on both.
"""

from __future__ import annotations

from typing import Any, Mapping

# graph replays slower than this many times the eager calls' end-to-end median did not run what the calls run
# (replays flush L2 before each and the calls do too; cuDNN chose another algorithm while capturing and an
# identity copy came out at 4.7x)
GRAPH_OVER_EAGER = 1.5
PROFILER_VS_GRAPH = 0.03
# the profiler slowed one compute-bound kernel by 6% against graph replays (docs/judging.md, Timing)
PROFILER_OVER_END_TO_END = 0.10


def profiler_figure(stats: Mapping[str, Any]) -> float | None:
    """The side's profiler figure in ms: its result where the profiler was its method, else the one its graph
    measurement took before capturing; None where there is none."""
    if stats.get("method") == "profiler":
        return _positive(stats.get("median_ms"))
    inner = stats.get("profiler")
    if isinstance(inner, Mapping) and inner.get("method") == "profiler":
        return _positive(inner.get("median_ms"))
    return None


def checks(stats: Mapping[str, Any], graph_ms: float | None, end_to_end_ms: float | None) -> dict[str, Any]:
    """How the side's profiler figure compares with its graph replays and its end-to-end median."""
    prof = profiler_figure(stats)
    graph, e2e = _positive(graph_ms), _positive(end_to_end_ms)
    out: dict[str, Any] = {"profiler_ms": prof, "graph_ms": graph, "end_to_end_ms": e2e}
    if prof is not None and graph is not None:
        out["profiler_vs_graph"] = round(prof / graph, 4)
        out["profiler_agrees_with_graph"] = abs(prof / graph - 1.0) <= PROFILER_VS_GRAPH
    if prof is not None and e2e is not None:
        out["profiler_vs_end_to_end"] = round(prof / e2e, 4)
        out["profiler_within_end_to_end"] = within_end_to_end(prof, e2e)
    return out


def within_end_to_end(profiler_ms: float, end_to_end_ms: float) -> bool:
    return profiler_ms <= end_to_end_ms * (1.0 + PROFILER_OVER_END_TO_END)


def profiler_reason(sol: Mapping[str, Any], ref: Mapping[str, Any], eager: Mapping[str, Any]) -> str | None:
    """Why both sides must be measured by the profiler, or None where both graph replays stand."""
    methods = {sol.get("method"), ref.get("method")}
    if methods == {"cuda_graph", "profiler"}:
        return "measured by the profiler, as the other side could not be replayed as a graph"
    for side, stats in (("solution", sol), ("reference", ref)):
        e2e = _positive(eager.get(side))
        graph = _positive(stats.get("median_ms")) if stats.get("method") == "cuda_graph" else None
        if graph is not None and e2e is not None and graph > GRAPH_OVER_EAGER * e2e:
            return f"measured by the profiler, as the {side}'s graph replays were slower than its eager calls"
    return None


def as_profiler(stats: Mapping[str, Any], note: str, keep_graph: bool = True) -> dict[str, Any] | None:
    """A graph measurement's own profiler figure as the side's result (only its known fields: the solution's
    process sent it), with the replays' median kept beside it; None where it took none."""
    inner, figure = stats.get("profiler"), profiler_figure(stats)
    if figure is None or not isinstance(inner, Mapping):
        return None
    out: dict[str, Any] = {"method": "profiler", "median_ms": figure, "note": note}
    for key in ("samples", "streams"):
        if isinstance(inner.get(key), int) and not isinstance(inner.get(key), bool):
            out[key] = inner[key]
    if _positive(inner.get("summed_ms")) is not None:
        out["summed_ms"] = float(inner["summed_ms"])
    if keep_graph and _positive(stats.get("median_ms")) is not None:
        out["graph_ms"] = float(stats["median_ms"])
    return out


def device_state(stats: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a process said of its device state after a failed capture or device-clock error: {"verified",
    "note"}, or None where it said nothing. Anything but a clear `verified: true` counts as unverified."""
    state = stats.get("device_state")
    if state is None:
        return None
    if not isinstance(state, Mapping):
        return {"verified": False, "note": "malformed device state report"}
    return {"verified": state.get("verified") is True, "note": str(state.get("note", ""))[:600]}


def _positive(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")
    return float(value) if ok else None
