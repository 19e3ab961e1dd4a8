"""Timing: the reference and the solution in interleaved rounds on the same device, and two clocks.

End-to-end clock (the default speedup, as in KernelBench): each call with fresh inputs, L2 flushed, the
window closed only once the whole device is idle (worker/timing.py). The reference is timed in the trusted
reference process and the solution in its own, in alternating rounds (reference, solution, reference, ...)
within this judge run, so both medians are taken under the same load; the speedup divides them. A
tf32-class solution is compared with the reference re-timed with TF32 allowed (a third series in the same
rounds), so reduced precision buys no free speedup; the verdict keeps both speedups. The reference-time
cache only sizes the rounds, unless the user asks to reuse it (flag `reference_time_reused`).

Device clock (`speedup_device`): launch overhead removed, by CUDA-graph replays where capture works and the
profiler's busy time of one call where it does not (worker/device_clock.py; which one serves, and how the two
agree with each other and with the end-to-end clock: judging/clock_choice.py), taken after the end-to-end
rounds, so that nothing it does to the solution's process can change their figures.
"""

from __future__ import annotations

import math
import secrets
import time
from typing import Any

from kerneljudge.numerics import error_classes
from kerneljudge.core import sampling
from kerneljudge.judging import clock_choice
from kerneljudge.judging.context import Context, Outcome
from kerneljudge.judging.reference import ReferenceError

ROUND_TARGET_MS = 50.0      # a round of calls on each side lasts about this long
MIN_ROUND, MAX_ROUND = 3, 25
DEVICE_BUDGET_FRACTION = 0.25  # of the timing budget, for each side's device-clock replays
# Device-clock blocks, solution and reference alternating, ABBA twice: a drift of the GPU's clocks during the
# measurement, linear in time, falls on both sides equally within each ABBA.
DEVICE_ORDER = ("sol", "ref", "ref", "sol", "sol", "ref", "ref", "sol")
REL_CI = 0.005   # the half-width of a median's 95% interval, relative, below which it is known well enough


def time_interleaved(ctx: Context, plan: sampling.SamplingPlan, check_seeds: dict[int, int],
                     check_index: dict[int, int], result: dict[str, Any]) -> None:
    opts, problem = ctx.options, ctx.problem
    arithmetics = ["fp32"] + (["tf32"] if reduced_precision(ctx) else [])
    reused = {a: c for a in arithmetics if opts.reuse_reference_times
              and (c := ctx.reference.cached_timing(problem.sha256, ctx.preset, tf32=a == "tf32")) is not None}
    if reused:
        ctx.flags.add("reference_time_reused")
    series = {a: _Series() for a in arithmetics if a not in reused}
    for arith, s in series.items():
        with ctx.phase("reference_timing"):
            s.warm = _reference_round(ctx, arith, warm=True)["warm"]
    sol = _Series()
    with ctx.phase("solution_timing"):
        started = time.monotonic()
        while not plan.warm(sol.warm, time.monotonic() - started):
            sol.warm.append(_timed_call(ctx, secrets.randbits(62))[0])
    size = _round_size([s.estimate() for s in series.values()] + [sol.estimate()]
                       + [float(c["median_ms"]) for c in reused.values()])
    rounds = 0
    while True:
        rounds += 1
        for arith, s in series.items():
            with ctx.phase("reference_timing"):
                # one request per call, as the solution's calls come (each seed just before its call): a call
                # made right after a request arrives pays the wake-up, and the two sides must pay it alike (a
                # round in one request made identity copies 5-40% faster on the reference's side on the CPU)
                for _ in range(size):
                    began = time.monotonic()
                    got = _reference_round(ctx, arith, calls=1)
                    s.add(got, time.monotonic() - began)
        with ctx.phase("solution_timing"):
            _solution_round(ctx, sol, size, check_seeds, check_index)
        sides = [*series.values(), sol]
        if plan.done_together([s.samples for s in sides], sum(s.elapsed for s in sides)) \
                and len(sol.samples) > max(check_seeds, default=-1):
            break
    sol_stats = sol.stats()
    ref = {a: {**s.stats(), "overhead_ms": sampling.median_ci(s.overheads)[0], "cached": False}
           for a, s in series.items()}
    for arith, stats in ref.items():
        ctx.reference.store_timing(problem.sha256, ctx.preset, stats, tf32=arith == "tf32")
    ref.update({a: {**c, "cached": True} for a, c in reused.items()})
    _cross_check(ctx, sol_stats, ref["fp32"], sol.gaps)
    used = "tf32" if "tf32" in ref else "fp32"
    sol_ms, ref_ms, fp32_ms = sol_stats["median_ms"], ref[used]["median_ms"], ref["fp32"]["median_ms"]
    result.update(ref_ms=ref_ms, sol_ms=sol_ms, ref_fp32_ms=fp32_ms, sol_timing=sol_stats,
                  ref_timing={**ref[used], "arithmetic": used, "interleaved_rounds": rounds, "calls_per_round": size})
    result["speedup_end_to_end"] = _ratio(ref_ms, sol_ms)
    # the speedup's interval from the two medians' 95% intervals (each side's worst case against the other's)
    result["speedup_ci95"] = [_ratio(ref[used]["ci95_low_ms"], sol_stats["ci95_high_ms"]),
                              _ratio(ref[used]["ci95_high_ms"], sol_stats["ci95_low_ms"])]
    result["speedup_vs_fp32_reference"] = _ratio(fp32_ms, sol_ms)
    if result["speedup_end_to_end"] > opts.speedup_review_threshold:
        ctx.flags.add("suspicious_speedup")  # the speed-of-light check may clear it (work_audit)


def reduced_precision(ctx: Context) -> bool:
    """A tf32-class output on a GPU: its reference is re-timed with TF32 allowed (the CPU has no TF32)."""
    return ctx.device == "cuda" and (ctx.numerics or {}).get("class") == "tf32"


class _Series:
    """The samples of one timed side (the reference at one arithmetic, or the solution)."""

    def __init__(self) -> None:
        self.warm: list[float] = []
        self.samples: list[float] = []
        self.clocks: list[str] = []
        self.overheads: list[float] = []
        self.gaps: list[float] = []
        self.elapsed = 0.0

    def estimate(self) -> float | None:
        recent = self.warm[-3:]
        return sorted(recent)[len(recent) // 2] if recent else None

    def add(self, reply: dict[str, Any], elapsed_s: float) -> None:
        self.samples += [float(x) for x in reply["samples"]]
        self.clocks += [str(x) for x in reply["clocks"]]
        self.overheads += [float(x) for x in reply["overheads"]]
        self.elapsed += elapsed_s

    def stats(self) -> dict[str, Any]:
        return sampling.summarize(self.samples, len(self.warm), self.clocks)


def _round_size(estimates_ms: list[float | None]) -> int:
    known = [e for e in estimates_ms if e is not None and e > 0]
    if not known:
        return MIN_ROUND
    return max(MIN_ROUND, min(MAX_ROUND, int(ROUND_TARGET_MS / max(known))))


def _reference_round(ctx: Context, arithmetic: str, *, calls: int = 0, warm: bool = False) -> dict[str, Any]:
    with ctx.judges_time():   # the reference's rounds are not the solution's run time
        return ctx.reference.time_round(ctx.problem.path, ctx.preset, ctx.init_seed, calls=calls, warm=warm,
                                        tf32=arithmetic == "tf32", budget_s=ctx.options.time_budget_s)


def _solution_round(ctx: Context, sol: _Series, size: int, check_seeds: dict[int, int],
                    check_index: dict[int, int]) -> None:
    began = time.monotonic()
    checking_s = 0.0  # re-checking outputs is the judge's cost, not the solution's: kept out of the budget
    for _ in range(size):
        i = len(sol.samples)
        ms, clock, gap = _timed_call(ctx, check_seeds.get(i, secrets.randbits(62)))
        sol.samples.append(ms)
        sol.clocks.append(clock)
        sol.gaps.append(gap)
        if i in check_index:
            check_started = time.monotonic()
            cmp = ctx.compare(check_index[i], ctx.request_output({"cmd": "ship"}))
            checking_s += time.monotonic() - check_started
            if not cmp["ok"]:
                raise Outcome("rejected", f"timed call {i + 1} returned a wrong output ({cmp['reason']}): "
                              "outputs of timed calls must be as correct as the checked ones",
                              ("timed_output_mismatch",))
            found = (cmp.get("detail") or {}).get("numerics")
            if error_classes.reduced(found) and not error_classes.reduced(ctx.numerics):
                # reduced precision only while timed: the reference was chosen for the trials' arithmetic
                raise Outcome("rejected", f"timed call {i + 1} returned an output of the {found.get('class')} "
                              f"class where the checked calls' were {(ctx.numerics or {}).get('class')}: outputs "
                              "of timed calls must be as precise as the checked ones", ("timed_output_mismatch",))
    sol.elapsed += time.monotonic() - began - checking_s


def _timed_call(ctx: Context, seed: int) -> tuple[float, str, float]:
    sent = time.monotonic()
    reply = ctx.request({"cmd": "timed", "seed": seed})
    observed_ms = (time.monotonic() - sent) * 1e3
    try:
        ms, host_ms = float(reply["ms"]), float(reply["host_ms"])
        clock = str(reply.get("clock", "host"))
    except (KeyError, TypeError, ValueError):
        raise Outcome("rejected", "the solution's process sent a malformed timing reply",
                      ("protocol_violation",)) from None
    # the child's own window cannot be longer than the round trip the orchestrator saw, nor negative
    if not (0 <= ms <= host_ms + 1e-3) or host_ms > observed_ms + 0.5:
        ctx.flags.add("timing_inconsistent")
    return ms, clock, observed_ms - ms


def _cross_check(ctx: Context, sol_stats: dict[str, Any], ref_stats: dict[str, Any], gaps: list[float]) -> None:
    """Time the child did not report must be explained by per-call overhead the reference also has."""
    gap = sampling.median_ci(gaps)[0]
    # a CPU shares its cores with builds and the orchestrator (a batch builds while it times), so its
    # round trips stretch more; there is no asynchronous device there to hide work on either
    gpu = ctx.device == "cuda"
    allowance = float(ref_stats.get("overhead_ms", 0.0)) + (0.75 if gpu else 5.0) \
        + (0.5 if gpu else 1.0) * sol_stats["median_ms"]
    ctx.info["unreported_ms"] = gap
    if gap > allowance:
        ctx.flags.add("timing_inconsistent")


def device_clock(ctx: Context, result: dict[str, Any]) -> None:
    """The device-time clock for a correct, timed solution. On the CPU it is the host clock. Never changes the
    verdict: a solution whose graph cannot be captured is measured by the profiler, and one whose process
    fails here simply has no device time (unless it broke the protocol, which stays a rejection).

    The two processes replay their graphs in alternating blocks, in the order of DEVICE_ORDER: a GPU whose
    clocks drift while it works (warming up, reaching its power limit) slows both sides alike, where a side
    measured wholly after the other took the whole drift (identity copies of matmuls came out up to 15%
    apart). The second half of the order runs only where the first left a median less certain than REL_CI.

    Each side's timing fields report how its profiler figure agrees with its graph replays and its end-to-end
    median (`device.checks`, judging/clock_choice.py); a process whose device state could not be put back
    after a failed capture is noted in `ctx.info["device_state_unverified"]`, so that the rest of the
    judgement can run in a fresh process."""
    if ctx.device != "cuda":
        result.update(sol_device_ms=result.get("sol_ms"), ref_device_ms=result.get("ref_ms"),
                      speedup_device=result.get("speedup_end_to_end"), device_clock="host")
        return
    block_budget = max(0.1, DEVICE_BUDGET_FRACTION * ctx.options.time_budget_s) / DEVICE_ORDER.count("sol")
    seed = secrets.randbits(62)
    blocks: dict[str, list[dict[str, Any]]] = {"sol": [], "ref": []}
    measure = {"sol": _solution_block, "ref": _reference_block}
    with ctx.phase("device_time"):
        for index, side in enumerate(DEVICE_ORDER):
            if index == len(DEVICE_ORDER) // 2 and all(settled(b) for b in blocks.values()):
                break
            if blocks[side] and blocks[side][-1].get("method") != "cuda_graph":
                continue   # the profiler's answer, or a failure: nothing to replay again
            blocks[side].append(measure[side](ctx, seed, block_budget, first=not blocks[side]))
        _release_graphs(ctx, blocks)
        eager = {"solution": result.get("sol_ms"), "reference": result.get("ref_ms")}
        merged = {"solution": merge_blocks(blocks["sol"]), "reference": merge_blocks(blocks["ref"])}
        graphs = {side: m.get("median_ms") if m.get("method") == "cuda_graph" else m.get("graph_ms")
                  for side, m in merged.items()}
        sol, ref = _same_method(ctx, seed, block_budget, merged["solution"], merged["reference"], eager)
    chosen = {"solution": sol, "reference": ref}
    for side, stats in chosen.items():
        stats["checks"] = clock_choice.checks(merged[side], graphs[side], eager[side])
        if stats.get("method") == "profiler" and stats["checks"].get("profiler_within_end_to_end") is False:
            stats.update(median_ms=None, note=f"{stats.get('note') or 'profiler'}; not used: above the end-to-end "
                         "median, more than one call's device work")
        state = clock_choice.device_state(merged[side])
        stats.pop("device_state", None)
        if state is not None:
            stats["device_state"] = state
            if not state["verified"]:
                ctx.info.setdefault("device_state_unverified", {})[side] = state["note"]
    sol, ref = chosen["solution"], chosen["reference"]
    sol_ms, ref_ms = sol.get("median_ms"), ref.get("median_ms")
    result["sol_timing"] = {**(result.get("sol_timing") or {}), "device": _public(sol)}
    result["ref_timing"] = {**(result.get("ref_timing") or {}), "device": _public(ref)}
    if isinstance(sol_ms, (int, float)) and isinstance(ref_ms, (int, float)) and sol_ms > 0:
        result.update(sol_device_ms=sol_ms, ref_device_ms=ref_ms, speedup_device=ref_ms / sol_ms,
                      device_clock=sol.get("method"))


def _same_method(ctx: Context, seed: int, budget_s: float, sol: dict[str, Any], ref: dict[str, Any],
                 eager: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both sides on one clock that measures what the eager calls run (judging/clock_choice.py): graph replays
    where both stand, else the profiler on both. A side measured by graph replays brings the profiler figure
    its process took before capturing (what its eager calls run; a capture may change that afterwards); only a
    side without one is asked for the profiler again."""
    note = clock_choice.profiler_reason(sol, ref, eager)
    if note is None:
        return sol, ref
    if sol.get("method") == "cuda_graph":
        sol = clock_choice.as_profiler(sol, note) or _solution_profiler(ctx, seed, budget_s, sol, note)
    if ref.get("method") == "cuda_graph":
        ref = clock_choice.as_profiler(ref, note) or _reference_profiler(ctx, seed, budget_s, ref, note)
    if sol.get("method") != ref.get("method"):   # neither could be measured the other's way: no device clock
        sol = {**sol, "median_ms": None}
    return sol, ref


def _solution_profiler(ctx: Context, seed: int, budget_s: float, sol: dict[str, Any], note: str) -> dict[str, Any]:
    try:
        again = ctx.request({"cmd": "device_time", "seed": seed, "budget_s": budget_s, "method": "profiler"})
    except Outcome as out:
        if out.verdict == "rejected":
            raise
        return {"method": None, "median_ms": None, "note": f"{out.verdict}: {out.reason}"[:300]}
    return {**again, "note": note, "graph_ms": sol.get("median_ms")} if again.get("method") == "profiler" else sol


def _reference_profiler(ctx: Context, seed: int, budget_s: float, ref: dict[str, Any], note: str) -> dict[str, Any]:
    try:
        with ctx.judges_time():
            again = ctx.reference.device_time(ctx.problem.path, ctx.preset, ctx.init_seed, seed,
                                              tf32=reduced_precision(ctx), budget_s=budget_s, method="profiler")
    except ReferenceError as exc:
        return {"method": None, "median_ms": None, "note": f"the reference failed: {exc}"[:300]}
    return {**again, "note": note, "graph_ms": ref.get("median_ms")} if again.get("method") == "profiler" else ref


def merge_blocks(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's device time from its blocks: the median (and its 95% interval) of every replay of every
    block, where all were graph replays; else the block that was not (the profiler's answer or a failure)."""
    if not blocks:
        return {"method": None, "median_ms": None, "note": "not measured"}
    odd = [b for b in blocks if b.get("method") != "cuda_graph"]
    if odd:
        return odd[0]
    times = [t for b in blocks for t in b["times_ms"]]
    median, low, high = sampling.median_ci(times)
    merged = {"method": "cuda_graph", "median_ms": median, "ci95_ms": [low, high], "samples": len(times),
              "blocks": len(blocks), "note": blocks[0].get("note", "")}
    if isinstance(blocks[0].get("profiler"), dict):   # the profiler figure the capturing block took first
        merged["profiler"] = blocks[0]["profiler"]
    return merged


def settled(blocks: list[dict[str, Any]]) -> bool:
    """Nothing more to learn from replaying this side again: its merged median is known to REL_CI, or it
    was not measured by graph replays."""
    merged = merge_blocks(blocks)
    if merged.get("method") != "cuda_graph":
        return True
    low, high = merged["ci95_ms"]
    return merged["median_ms"] > 0 and (high - low) / 2 <= REL_CI * merged["median_ms"]


def _solution_block(ctx: Context, seed: int, budget_s: float, first: bool) -> dict[str, Any]:
    """One block of the solution's replays. The first also checks the graph's output against the reference
    (the graph is captured then); a graph that computed something else is replaced by the profiler."""
    try:
        if first:
            ctx.expect(ctx.preset, [seed])
        sent = time.monotonic()
        reply = ctx.request({"cmd": "device_time", "seed": seed, "budget_s": budget_s, "block": True})
        observed_ms = (time.monotonic() - sent) * 1e3
        if reply.get("method") != "cuda_graph":
            return reply
        times = replay_times(reply)
        if not sum(times) <= observed_ms + 0.5:
            ctx.flags.add("timing_inconsistent")  # replays cannot have taken longer than the whole round trip
            return {"method": None, "median_ms": None, "note": "the replay times did not fit the round trip"}
        if not first:
            return {**reply, "times_ms": times}
        cmp = ctx.compare(0, ctx.request_output({"cmd": "ship"}))
        if cmp["ok"]:
            return {**reply, "times_ms": times}
        # the graph computed something else than the eager calls did: not the solution's fault, not its time;
        # the profiler figure taken before the capture serves (asked for again only where there is none)
        note = f"the graph's output was wrong ({cmp['reason'][:150]}); profiler used"
        fallback = clock_choice.as_profiler(reply, note, keep_graph=False)
        if fallback is None:
            budget = budget_s * DEVICE_ORDER.count("sol")
            fallback = {**ctx.request({"cmd": "device_time", "seed": seed, "budget_s": budget, "method": "profiler"}),
                        "note": note}
        return fallback
    except Outcome as out:
        if out.verdict == "rejected":
            raise
        return {"method": None, "median_ms": None, "note": f"{out.verdict}: {out.reason}"[:300]}


def replay_times(reply: dict[str, Any]) -> list[float]:
    """The replay times a solution's process reported, checked to be what a replay can take."""
    times = reply.get("times_ms")
    if not (isinstance(times, list) and times and all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < math.inf for t in times)):
        raise Outcome("rejected", "the solution's process sent a malformed device-time reply",
                      ("protocol_violation",))
    return [float(t) for t in times]


def _reference_block(ctx: Context, seed: int, budget_s: float, first: bool) -> dict[str, Any]:
    try:
        with ctx.judges_time():
            return ctx.reference.device_time(ctx.problem.path, ctx.preset, ctx.init_seed, seed,
                                             tf32=reduced_precision(ctx), budget_s=budget_s, block=True)
    except ReferenceError as exc:
        return {"method": None, "median_ms": None, "note": f"the reference failed: {exc}"[:300]}


def _release_graphs(ctx: Context, blocks: dict[str, list[dict[str, Any]]]) -> None:
    """Each process drops the graph its blocks held (a failure here changes nothing measured)."""
    if blocks["sol"]:
        try:
            ctx.request({"cmd": "release_graph"})
        except Outcome as out:
            if out.verdict == "rejected":
                raise
    if blocks["ref"]:
        try:
            with ctx.judges_time():
                ctx.reference.release_graph()
        except ReferenceError:
            pass


PUBLIC_FIELDS = ("method", "median_ms", "ci95_ms", "samples", "blocks", "summed_ms", "streams", "graph_ms", "note",
                 "checks", "device_state")


def _public(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: stats.get(k) for k in PUBLIC_FIELDS if k in stats}


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.inf
