"""Run one solution through its phases: start its boxed process, build and load it, then on the device in
turns (judging/device/turns.py) the reference outputs, init, trials, timing, profile, device clock and held-out shapes.

What goes wrong raises an Outcome or a ProblemOutcome (judging/context.py) for judging/evaluate.py to turn into
a verdict; the timing figures land in `result`. The steps live beside this file: correctness (trials, output
ownership, held-out shapes), timed (interleaved timing, device clock), work_audit (profile, speed of light).
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any, Callable

from kerneljudge.core import sampling
from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core.problem import ProblemError, problem_text
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging import boxing, correctness, cores, environment, timed, warm_start, work_audit
from kerneljudge.judging.device import slots, turns
from kerneljudge.judging.build.request import BuildRefused
from kerneljudge.judging.child import Child
from kerneljudge.judging.context import Context, Outcome, ProblemOutcome
from kerneljudge.judging.device.slots import Slot
from kerneljudge.judging.reference import ReferenceError

TIMED_CHECKS_GPU = 3
TIMED_CHECKS_CPU = 2


def run_solution(ctx: Context, solution_path: str, result: dict[str, Any], slot: Slot) -> None:
    """Start the solution's boxed process and walk its phases; returns when it is correct (and timed, when
    asked), else raises. The process is killed and its box removed either way."""
    opts, problem = ctx.options, ctx.problem
    ctx.reference.start()  # its start overlaps the solution's (a no-op when it is running already)
    report = slot.box or boxing.session_report(opts.require_sandbox)
    base_env = environment.child_env(ctx.device, opts.threads, _cache_dir(opts), slot.env)
    template = boxing.triton_template(_cache_dir(opts), base_env) \
        if ctx.device == "cuda" and ctx.info.get("backend") == "triton" else None
    try:   # the solution's process gets the problem's text with its first request, so its box need not show it
        source = problem_text(problem)
    except ProblemError as exc:
        raise ProblemOutcome("reference_failed", str(exc)) from None
    box = boxing.make_box(report, base_env, [solution_path], ctx.device, template)
    ctx.exchange = box.exchange
    ctx.on_build = lambda request, left: _build_extension(slot, box, request, left, ctx)
    if not report.complete:
        ctx.flags.add("unsandboxed")
    # until its first turn the solution's process shares the device with every other process on it: running out
    # of device memory there (its CUDA context, its import) is judged again alone, as in a crowded check
    ctx.info["crowded"] = True
    try:
        ctx.deadline = time.monotonic() + opts.build_timeout_s
        load = {"cmd": "load", "problem_path": problem.path, "problem_source": source, "solution_path": solution_path,
                "device": ctx.device, "precision": opts.precision, "threads": opts.threads}
        with ctx.phase("build"):
            boxed = _start_solution_process(ctx, box, slot)
            ctx.info["sandbox"] = box.verdict_fields({k: boxed.get(k) for k in ("layers", "missing", "narrowed")})
            ctx.info["sandbox"]["started"] = "warm" if ctx.child.warm else "cold"  # judging/warm_start.py
            reply = ctx.request(load)
        ctx.info["environment"] = reply.get("environment", {}) if isinstance(reply.get("environment"), dict) else {}
        # the reference's model is drawn on the CPU before this judgement takes a turn on the device (the judge's
        # time, not the solution's: no deadline runs meanwhile)
        waited = slot.reference.wait_prepared(problem.sha256, opts.run_timeout_s)
        if waited > 0.001:
            ctx.add_time("reference_preparation", waited)
        # Everything that touches the device happens in a turn on it (judging/device/turns.py): checks may share the
        # device with other solutions' checks, timing has it alone, on the quiet cores.
        need = _admission_need(ctx)
        hold = turns.Hold(slot.turns, _admission_limit(ctx, slot, need), lambda s: _waited(ctx, s),
                          lambda alone: _pin_timed(ctx, slot, alone), need,
                          sole=lambda: _memory_to_itself(ctx, slot), pids=lambda: _judgement_pids(ctx))
        try:
            hold.check()
            slot.reference.entered(ctx.reference, problem.path)
            try:
                _judge_on_device(ctx, result, slot, hold, lambda: _start_again(ctx, box, slot, load))
            except ReferenceError:
                _note_memory_held(ctx, slot)
                raise
            finally:
                ctx.reference.forget(ctx.token)
        finally:
            if ctx.child is not None:   # its device memory goes before another judgement is admitted in its place
                ctx.child.kill()
            try:
                if hold.admitted:   # what the reference process holds for this judgement alone goes back too
                    slot.reference.left(ctx.reference, problem.path, slot.turns.memory)
            finally:
                hold.release()
                ctx.info["crowded"] = hold.crowded
    finally:
        if ctx.child is not None:
            ctx.child.kill()  # nothing may still write into the box's folders while they are removed
        box.remove()


def _admission_need(ctx: Context) -> int | None:
    """The device bytes this judgement is admitted with (judging/device/turns.py): its reference process's figure
    (the peak it measured, else its estimate from the model it prepared), else the shape plan's (shape_budget.
    planned_need), else None (an even share). The verdict's shapes say which (`admitted_need`)."""
    need, source = ctx.reference.device_need(ctx.problem.path), "reference"
    if need is None and ctx.planned_need is not None:
        need, source = ctx.planned_need, "shape_plan"
    if ctx.device == "cuda":
        ctx.info["admitted_need"] = {"bytes": need, "from": source if need is not None else "even_share"}
    return need


def _admission_limit(ctx: Context, slot: Slot, need: int | None) -> int:
    """How many judgements may be admitted beside this one (and it beside them): checks_at_once, but 1 for a
    judgement whose need fills the device's budget on its own (`card_sized`). Such a judgement is admitted alone
    and has every other reference process closed first, as one judged again after a memory failure is: on the
    H100, upstream's 6-8 GiB problems (one judgement of them held 69 GiB: 36.6 in its reference's process, 32.6
    in its solution's) ran out of memory with no other judgement admitted, beside other processes' leftovers and
    contexts, and passed when judged again that way."""
    limit = turns.checks_at_once(ctx.options, ctx.device)
    if limit > 1 and need is not None and slot.turns.budget and need >= slot.turns.budget:
        ctx.info["card_sized"] = True
        ctx.info.setdefault("admitted_need", {})["alone"] = True
        return 1
    return limit


def _memory_to_itself(ctx: Context, slot: Slot) -> None:
    """Admitted with the device's memory to itself (limit 1): on a GPU, the other reference processes park their
    models and the card's use settles first. A judgement tried again after a memory failure (`alone_again`), or
    one whose need fills the card (`card_sized`), has every other reference process closed instead, and waits until
    the device lists none of them; one judged with --checks-at-once 1 does not, or every judgement would close the
    others' processes and their models be built again for the next."""
    if ctx.device == "cuda":
        slots.clear_device(slot, ctx.reference,
                           close_others=bool(ctx.info.get("alone_again") or ctx.info.get("card_sized")))


def _note_memory_held(ctx: Context, slot: Slot) -> None:
    """The reference failed: what the judgement's two processes held on the device right then, read before the
    solution's process is killed (judging/evaluate.py decides from it whether a memory failure was the judge's)."""
    memory, child, reference_pid = slot.turns.memory, ctx.child, ctx.reference.pid
    if ctx.device != "cuda" or memory is None or child is None or not reference_pid:
        return
    solution = memory.held_by([child.proc.pid], fresh=True)
    reference = memory.held_by([reference_pid])   # the same reading, just taken
    if solution is not None and reference is not None:
        ctx.info["held_at_reference_failure"] = {"solution_bytes": solution, "reference_bytes": reference}


def _judgement_pids(ctx: Context) -> list[int]:
    """The processes whose device memory is this judgement's: its solution's (the box's worker is a descendant)
    and its reference's (shared with the other judgements of its problem)."""
    child = ctx.child   # read once: the held-out shapes may start a fresh process meanwhile
    return [pid for pid in (child.proc.pid if child is not None else None, ctx.reference.pid) if pid]


def _pin_timed(ctx: Context, slot: Slot, alone: bool) -> None:
    """While a solution is timed, its process and its problem's reference process run on the quiet cores; the
    rest of the time on the build cores (where a reference process builds its next model)."""
    if not slot.timing_cores:
        return
    cores.pin_tree(ctx.child.proc.pid, slot.timing_cores if alone else slot.other_cores)
    slot.reference.pin(ctx.reference, slot.timing_cores if alone else slot.reference.idle_cores or slot.timing_cores)


def _start_solution_process(ctx: Context, box: boxing.SolutionBox, slot: Slot) -> dict[str, Any]:
    """Start the solution's process (forked from the slot's warm template where there is one) and take its
    box step, the reply to which comes before any solution code runs. A fork that fails that step is the
    template's fault, never the solution's: the template is retired and the process started cold."""
    warm = warm_start.template_for(box.env) if slot.warm_start and warm_start.enabled() else None
    while True:
        ctx.child = Child("kerneljudge.worker.solution", box.env, cwd=box.scratch, wrap=box.wrap,
                          template=warm, spec=box.spec)
        cores.pin_tree(ctx.child.proc.pid, slot.other_cores if slot.timing_cores else ())
        try:
            return ctx.request({"cmd": "box"})
        except Outcome as out:
            if not ctx.child.warm:
                raise
            ctx.child.kill()
            warm.retire(f"a fork of it failed before any solution code ran: {out.verdict}: {out.reason}"[:500])
            warm = None


def _build_extension(slot: Slot, box: boxing.SolutionBox, request: Any, seconds_left: float,
                     ctx: Context) -> dict[str, Any]:
    """A load_inline/load call of the solution: built by the trusted builder, copied into its scratch."""
    if slot.builder is None:
        return {"ok": False, "log": "this judge has no builder"}
    try:
        built = slot.builder.build(request, max(1.0, seconds_left))
    except BuildRefused as exc:
        return {"ok": False, "log": f"the judge refused the build request: {exc}"}
    ctx.info.setdefault("builds", []).append({"name": built.name, "ok": built.ok, "seconds": built.seconds,
                                              "reused": built.reused, "key": built.key,
                                              "lean_headers": built.lean_headers,
                                              "slim_headers": built.slim_headers,
                                              "precompiled_header": built.precompiled_header,
                                              "queued_s": built.queued_s})
    if not built.ok:
        return {"ok": False, "log": built.log, "queued_s": built.queued_s}
    return {"ok": True, "path": slot.builder.copy_into(built, box.scratch), "queued_s": built.queued_s}


def _waited(ctx: Context, seconds: float) -> None:
    """Time spent waiting for a turn on the device is the judge's, not the solution's."""
    ctx.add_time("wait_for_device", seconds)
    ctx.deadline += seconds


def _start_again(ctx: Context, box: boxing.SolutionBox, slot: Slot, load: dict[str, Any]) -> None:
    """A fresh process for the rest of a judgement, loaded as the first was (its builds come from the builder's
    cache): where the device clock could not put the solution's process back as it was after a failed capture, a
    judge-side failure must not become the solution's verdict at its held-out shapes."""
    ctx.child.kill()
    _start_solution_process(ctx, box, slot)
    ctx.request(load)
    ctx.info["held_out_process"] = "fresh"


def _judge_on_device(ctx: Context, result: dict[str, Any], slot: Slot, hold: turns.Hold,
                     start_again: Callable[[], None] | None = None) -> None:
    opts = ctx.options
    ctx.deadline = time.monotonic() + opts.run_timeout_s
    plan = sampling.SamplingPlan(ctx.device, opts.time_budget_s)
    checks = TIMED_CHECKS_GPU if ctx.device == "cuda" else TIMED_CHECKS_CPU
    trial_seeds = [secrets.randbits(62) for _ in range(opts.trials)]
    trial_seeds += correctness.ownership_seeds(len(trial_seeds))
    check_at = sorted(random.SystemRandom().sample(range(plan.min_samples), checks)) if opts.timing else []
    check_seeds = {i: secrets.randbits(62) for i in check_at}
    with ctx.phase("reference_outputs"):
        degenerate = ctx.expect(ctx.preset, trial_seeds + list(check_seeds.values()), tighten=True)
    if degenerate:   # the reference cannot tell a right answer from a wrong one here: no solution output matters
        raise ProblemOutcome(degenerate["kind"], degenerate["reason"], degenerate.get("figures"))
    if ctx.expected_bytes > turns.SHARED_OUTPUT_BYTES:
        hold.check_alone()  # too large to share the device's memory with other solutions' checks
    with ctx.phase("init"):
        ctx.request({"cmd": "init", "preset": ctx.preset, "init_seed": ctx.init_seed})
    with ctx.phase("trials"):
        correctness.run_trials(ctx, trial_seeds)
    if opts.timing:
        # one turn alone for everything that needs the device to itself, at the judged shape: interleaved timing,
        # the profile's kernel times and the device clock (no model is rebuilt inside it)
        hold.time()
        check_index = {i: len(trial_seeds) + n for n, i in enumerate(sorted(check_seeds))}
        timed.time_interleaved(ctx, plan, check_seeds, check_index, result)
        with ctx.phase("profile"):
            work_audit.profile(ctx, result)
        work_audit.speed_of_light_check(ctx, result, slot.reference.environment, _cache_dir(opts), slot.reference.count)
        timed.device_clock(ctx, result)
    unverified = ctx.info.get("device_state_unverified") or {}
    if ctx.held_out and unverified.get("solution") and start_again is not None:
        start_again()
    if ctx.held_out and unverified.get("reference") and slot.reference.users(ctx.reference) <= 1:
        ctx.reference.close()   # started afresh by its next request; its model is built again
    if ctx.held_out:
        hold.check()
        with ctx.phase("held_out"):
            correctness.held_out(ctx)


def _cache_dir(options: JudgeOptions) -> str:
    return options.cache_dir or default_cache_dir()
