"""Judge one solution and assemble its Verdict: static checks, then the run of its phases, then the outcome.

The orchestrator side of the protocol. It holds the secret seeds, talks to the solution's child over the
private channel, has the trusted reference process keep and compare the expected outputs, and checks
everything the child claims that it can check. Here: the static gate, the verdict from what the run raised
or measured (a reference that fails is tried again alone; a crowded check that ran out of memory is judged
again with the device to itself), and the clock the speedup is read on. The run itself is
judging/solution_run.py; the devices it runs on are judging/device/slots.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
import time
import traceback
from pathlib import Path
from typing import Any

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.analysis import analyze, detect_backend
from kerneljudge.analysis import kernels
from kerneljudge.core.problem import Problem
from kerneljudge.shapes.plan import ShapePlan
from kerneljudge.core.types import BACKENDS, BLOCKING_FLAGS, CPU_BACKENDS, JudgeOptions, Verdict
from kerneljudge.judging import shape_budget, shapes
from kerneljudge.judging.device import slots, turns
from kerneljudge.judging.context import Context, Outcome, ProblemOutcome
from kerneljudge.judging.reference import ReferenceError, ReferenceService
from kerneljudge.judging.device.slots import Slot
from kerneljudge.judging.solution_run import run_solution


def evaluate(problem: Problem, solution_path: str, options: JudgeOptions, slot: Slot, device: str,
             plan: ShapePlan | None = None) -> Verdict:
    """Judge one solution file. Never raises for anything the solution does; raises OSError if unreadable."""
    reference = slot.reference.acquire(problem.sha256)
    try:
        return _evaluate(problem, solution_path, options, slot, device, plan, reference)
    finally:
        slot.reference.release(reference)


def judged_preset(problem: Problem, plan: ShapePlan, options: JudgeOptions, device: str) -> tuple[bool, dict]:
    """(small, the preset's constants) a solution of this problem is judged at: the small preset, else the
    default shape, or the preset fitted to the device's memory where the plan has one (shapes/fit.py)."""
    small = options.preset == "small" or (options.preset == "auto" and device == "cpu")
    if small and plan.source["small"] == "none":
        small = False
    if small:
        return True, dict(plan.small)
    return False, dict(plan.fitted["overrides"]) if plan.fitted else {}


def _evaluate(problem: Problem, solution_path: str, options: JudgeOptions, slot: Slot, device: str,
              plan: ShapePlan | None, reference: ReferenceService, alone_again: bool = False) -> Verdict:
    started = time.monotonic()
    solution_path = str(Path(solution_path).resolve())  # the solution's process works in its own folder
    text = Path(solution_path).read_text()
    backend = detect_backend(text)
    findings = analyze(text, options.policy, backend)
    if plan is None:
        budget = shape_budget.judgement_budget(options, device, shape_budget.first_gpu(slot.env))
        plan = shapes.resolve(problem, options.cache_dir or default_cache_dir(), mode=options.held_out,
                              memory_budget=budget)
    small, preset = judged_preset(problem, plan, options, device)
    fitted = plan.fitted if plan.fitted and not small else None   # the default shape does not fit the device
    checked = options.held_out != "none"   # none: upstream's semantics, the benchmark shape only
    far_below = plan.far_below_for(small) if checked else None
    ctx = Context(problem, options, device, reference, small, preset,
                  held_out=plan.held_out_for(small) if checked else [], init_seed=slot.init_seed(problem),
                  far_below_index=far_below["index"] if far_below else None,
                  planned_need=shape_budget.planned_need(plan, small))
    ctx.transport = "ipc" if device == "cuda" and slot.ipc else "file"
    ctx.contract = options.numerics
    ctx.info["alone_again"] = alone_again   # a judgement tried again after a memory failure (solution_run)
    ctx.info["backend"] = backend
    # the solution's own kernel names, read from its source here (for the profile, threat C3)
    ctx.info["custom_kernels"] = kernels.custom_kernel_names(text)
    ctx.info["header_libraries"] = kernels.header_libraries(text)
    base = dict(problem=problem.path, solution=solution_path, problem_id=problem.id,
                backend=backend, policy=options.policy, precision=options.precision, device=device,
                problem_sha256=problem.sha256, solution_sha256=hashlib.sha256(text.encode()).hexdigest(),
                preset="small" if small else "fitted" if fitted else "default",
                findings=tuple(f.to_dict() for f in findings),
                contract=options.numerics,
                shapes={"preset": preset, "held_out": ctx.held_out, "source": dict(plan.source),
                        "far_below": far_below, "held_out_mode": options.held_out,
                        **({"device_memory": options.device_memory} if options.device_memory else {}),
                        **({"fitted": dict(fitted)} if fitted else {})})
    if options.numerics == "kernelbench":
        ctx.flags.add("kernelbench_tolerance")
    if not checked:
        ctx.flags.add("held_out_off")
    if fitted:
        ctx.flags.add("preset_fitted")
    result: dict[str, Any] = {}
    problem_outcome = None
    try:
        _static_gate(findings, backend, device, options)
        run_solution(ctx, solution_path, result, slot)
        verdict, reason, excerpt = "correct", "matches the reference", ""
    except Outcome as out:
        verdict, reason, excerpt = out.verdict, out.reason, out.excerpt
        ctx.flags.update(out.flags)
    except ProblemOutcome as out:
        verdict, reason, excerpt, problem_outcome = "unjudgeable", out.reason, "", out.describe()
    except ReferenceError as exc:
        verdict, reason, excerpt = "runtime_error", "the problem's reference failed to run", str(exc)[-4000:]
        ctx.flags.add("reference_error")
    except Exception as exc:  # a judge bug must not stop a batch; it is reported, never accepted
        verdict, reason = "runtime_error", f"internal judge error: {type(exc).__name__}: {exc}"
        excerpt = traceback.format_exc()[-4000:]
        ctx.flags.add("judge_error")
    finally:
        if ctx.child is not None:
            ctx.child.kill()
    if "reference_error" in ctx.flags and verdict == "runtime_error":
        failed = _reference_fails_alone(ctx, slot) or _judge_side_memory_failure(ctx, excerpt)
        if failed:   # not the solution's doing: the reference fails with no solution process beside it
            verdict, reason, problem_outcome = "unjudgeable", failed.reason, failed.describe()
    if verdict != "correct" and problem_outcome is None and is_memory_failure(reason + excerpt) \
            and turns.checks_at_once(options, device) > 1 and not ctx.info.get("card_sized"):
        # other judgements shared the device, and their memory may be what ran out: judged again, with the
        # device's memory to itself (checks_at_once=1 cannot come back here, nor a judgement that had it already)
        first = _first_attempt(ctx, verdict, reason, excerpt, slot, time.monotonic() - started)
        again = _evaluate(problem, solution_path, dataclasses.replace(options, checks_at_once=1), slot, device, plan,
                          reference, alone_again=True)
        return dataclasses.replace(again, flags=tuple(sorted({*again.flags, "checked_alone_again"})),
                                   wall_s=round(time.monotonic() - started, 3), ended_at=round(time.time(), 3),
                                   first_attempt=first)
    if problem_outcome is not None and not fitted and _fits_after_all(problem_outcome, device):
        # the reference ran out of memory with the card to itself: judged at a preset fitted to the card instead
        refit = shapes.resolve(problem, options.cache_dir or default_cache_dir(), mode=options.held_out,
                               memory_budget=shape_budget.judgement_budget(options, device,
                                                                           shape_budget.first_gpu(slot.env), card=True))
        if refit.fitted:
            return _evaluate(problem, solution_path, options, slot, device, refit, reference)
    if problem_outcome is not None:
        ctx.flags.discard("reference_error")
    if ctx.info.get("held_out_skipped"):
        base["shapes"] = {**base["shapes"], "held_out_skipped": ctx.info["held_out_skipped"]}
    if ctx.info.get("admitted_need"):   # the device memory it was admitted with, and whose figure that was
        base["shapes"] = {**base["shapes"], "admitted_need": ctx.info["admitted_need"]}
    if ctx.info.get("held_out_process"):   # the held-out shapes ran in a fresh process (solution_run._start_again)
        base["shapes"] = {**base["shapes"], "held_out_process": ctx.info["held_out_process"]}
    if verdict == "correct" and "input_mutated" in ctx.flags:
        verdict, reason = "rejected", "the solution changed its inputs in place"
    if verdict == "correct":
        _choose_clock(ctx, result)
        if (ctx.numerics or {}).get("class") == "tf32" and options.precision == "fp32":
            ctx.flags.add("reduced_precision")  # timed against a TF32-allowed reference where there is TF32
    flags = tuple(sorted(ctx.flags))
    blocking = [f for f in flags if f in BLOCKING_FLAGS]
    accepted = verdict == "correct" and not blocking
    if verdict == "correct" and blocking:
        reason = f"correct, but not accepted: {', '.join(blocking)}"
        notes = [ctx.info["flag_notes"][f] for f in blocking if f in ctx.info.get("flag_notes", {})]
        reason += f" ({'; '.join(notes)})" if notes else ""
    # the trusted reference process's description of the machine wins over what the child reported
    env = {**ctx.info.get("environment", {}), **(reference.environment or slot.reference.environment)}
    timed_fields = ("ref_ms", "sol_ms", "ref_timing", "sol_timing", "ref_fp32_ms", "ref_device_ms", "sol_device_ms")
    speed_fields = ("speedup", "speedup_end_to_end", "speedup_ci95", "speedup_vs_fp32_reference", "speedup_device")
    return Verdict(
        verdict=verdict, accepted=accepted, reason=reason, flags=flags, error_excerpt=excerpt,
        **{k: result.get(k) for k in timed_fields},
        **{k: result.get(k) if verdict == "correct" else None for k in speed_fields},
        clock=result.get("clock", "device" if options.clock == "device" else "end_to_end"),
        device_clock=result.get("device_clock"), clock_rule=options.clock,
        max_error=ctx.max_error, device_name=str(env.get("device_name", "")),
        # why the judgement ran under fp32, where the tf32 contract could not judge the problem
        numerics={**ctx.numerics, "tightened_from": ctx.info["contract_tightened_from"]}
        if ctx.numerics and "contract_tightened_from" in ctx.info else ctx.numerics,
        versions={k: str(env[k]) for k in ("python", "torch", "triton", "cuda", "driver") if k in env},
        build_s=ctx.phases.get("build"), builds=list(ctx.info.get("builds", [])),
        wall_s=round(time.monotonic() - started, 3), ended_at=round(time.time(), 3), phases_s=dict(ctx.phases),
        profile=list(ctx.info.get("profile", [])), sandbox=dict(ctx.info.get("sandbox", {})),
        problem_outcome=problem_outcome, **{**base, "contract": ctx.contract},
    )


def _first_attempt(ctx: Context, verdict: str, reason: str, excerpt: str, slot: Slot, wall_s: float) -> dict[str, Any]:
    """What a judgement judged again alone first ran into, and where: the phase it failed in, and what the device's
    turns and memory looked like as it ended (how many judgements were admitted beside it, how full the card was)."""
    return {"verdict": verdict, "reason": reason[:300], "error": error_line(excerpt)[:300],
            "failed_in": ctx.failed_in, "wall_s": round(wall_s, 3), "device": slot.turns.status()}


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")


def error_line(excerpt: str) -> str:
    """The line of an error excerpt that says what failed: the last memory failure, else the last exception line,
    else the last line. A child's stderr may end with a warning printed after the traceback (on the H100 torch's
    cpp_extension "No CUDA runtime is found" came last)."""
    lines = [line.strip() for line in excerpt.strip().splitlines() if line.strip()]
    for wanted in (is_memory_failure, _EXCEPTION_LINE.match):
        found = [line for line in lines if wanted(line)]
        if found:
            return found[-1]
    return lines[-1] if lines else ""


def _reference_fails_alone(ctx: Context, slot: Slot) -> ProblemOutcome | None:
    """After the reference failed while a solution was being judged: does it fail again in a fresh process, with the
    device to itself (no other judgement admitted, every other reference process closed and gone from the device's
    own list, the card's use settled) and no solution process alive (the solution's is killed by now)? Then the
    problem cannot run here, a problem-level outcome that reports the card's memory at the failure; else the failure
    stays the solution's (it may have taken the memory)."""
    with slot.turns.to_itself():
        if slot.reference.users(ctx.reference) <= 1:   # no other judgement talks to it: start it afresh
            ctx.reference.close()
        figures = slots.clear_device(slot, ctx.reference) or {}
        token = secrets.token_hex(8)
        try:
            ctx.reference.expect(token, ctx.problem.path, ctx.preset, ctx.init_seed,
                                 [secrets.randbits(62) for _ in range(2)], ctx.contract)
        except ReferenceError as exc:
            return ProblemOutcome("reference_failed", "the problem's reference fails to run here, also alone"
                                  + _card_text(figures) + ": "
                                  + (str(exc).strip().splitlines() or ["no message"])[-1][:300], figures or None)
        finally:
            ctx.reference.forget(token)
            slot.reference.give_back(ctx.reference, slot.turns.memory)
    return None


def _judge_side_memory_failure(ctx: Context, message: str) -> ProblemOutcome | None:
    """The reference ran out of device memory in a judgement with the device to itself (tried again alone, or
    admitted alone as `card_sized`), beside a solution process that held no more than the reference did (an identity
    copy holds what its reference holds): the judge's own two processes do not fit the card at this size, which is
    no fault of the solution's, though the reference runs alone (on upstream's 6 GiB elementwise problems on an
    H100, 2026-12-07; level 1 L2Norm, admitted alone, came out `runtime_error` while only judgements tried again
    alone were looked at). A problem-level outcome: the problem is judged again at a preset fitted to the card."""
    held = ctx.info.get("held_at_reference_failure")
    to_itself = ctx.info.get("alone_again") or ctx.info.get("card_sized")
    if not (to_itself and held and is_memory_failure(message)):
        return None
    solution, reference = held["solution_bytes"], held["reference_bytes"]
    if solution > SOLUTION_SHARE_OF_REFERENCE * reference:
        return None
    return ProblemOutcome("reference_failed", "the problem's reference ran out of device memory with the device to "
                          f"this judgement alone, beside a solution process holding {solution / 2**30:.1f} GiB "
                          f"against its own {reference / 2**30:.1f} GiB: the judge's two processes do not fit this "
                          "card at this size (out of memory)", dict(held))


# a solution process holding up to this share of what its reference holds is holding what the judge made it hold
# (the same inputs and outputs), plus a little of its own
SOLUTION_SHARE_OF_REFERENCE = 1.25


def _card_text(figures: dict[str, int]) -> str:
    """" (F GiB of T GiB free before it ran, O GiB held by other processes)", from clear_device's figures."""
    if "device_free_bytes" not in figures:
        return ""
    others = f", {figures['others_bytes'] / 2**30:.1f} GiB held by other processes" if "others_bytes" in figures \
        else ""
    return f" ({figures['device_free_bytes'] / 2**30:.1f} GiB of {figures['device_total_bytes'] / 2**30:.1f} GiB" \
           f" free before it ran{others})"


# Messages of a failure that can come from the device's memory being full rather than from the code: out of memory
# in an allocation or in creating a context, cuBLAS/cuDNN handles that could not allocate their workspace (their
# NOT_INITIALIZED is how a handle's creation fails for want of memory), and a device too full to take a context.
MEMORY_FAILURE_MARKERS = ("out of memory", "cudaerrormemoryallocation", "cuda_error_out_of_memory",
                          "cublas_status_alloc_failed", "cublas_status_not_initialized", "cudnn_status_alloc_failed",
                          "cudnn_status_not_initialized", "busy or unavailable", "cudaerrordevicesunavailable",
                          "cuda_error_devices_unavailable")


def is_memory_failure(text: str) -> bool:
    lowered = text.lower()
    return any(m in lowered for m in MEMORY_FAILURE_MARKERS)


def _fits_after_all(outcome: dict[str, Any], device: str) -> bool:
    """Whether a problem-level outcome is a reference that could not run for want of device memory, alone."""
    return device == "cuda" and outcome.get("kind") == "reference_failed" \
        and is_memory_failure(str(outcome.get("reason", "")))


def clock_for(option: str, result: dict[str, Any]) -> str:
    """Which clock `speedup` (and fast_p) reads (docs/judging.md, "Which clock"): `device` where both device times
    exist, `end_to_end` always; `auto` (the default) the device clock where both sides were measured by CUDA-graph
    replays (identity copies of upstream's problems within 0.1% there on an H100), else end to end."""
    if result.get("speedup_device") is None or option == "end_to_end":
        return "end_to_end"
    return "device" if option == "device" or result.get("device_clock") == "cuda_graph" else "end_to_end"


def _choose_clock(ctx: Context, result: dict[str, Any]) -> None:
    if "speedup_end_to_end" not in result:
        return
    use_device = clock_for(ctx.options.clock, result) == "device"
    result["clock"] = "device" if use_device else "end_to_end"
    result["speedup"] = result["speedup_device"] if use_device else result["speedup_end_to_end"]
    if use_device and result["speedup"] > ctx.options.speedup_review_threshold \
            and not ctx.info.get("speed_plausible"):
        ctx.flags.add("suspicious_speedup")


def _static_gate(findings: list, backend: str, device: str, options: JudgeOptions) -> None:
    by_code = {f.code: f for f in findings}
    for code in ("syntax_error", "missing_modelnew"):
        if code in by_code:
            raise Outcome("build_error", by_code[code].message)
    blocking = [f for f in findings if f.blocking]
    if blocking:
        first = blocking[0]
        codes = tuple(sorted({f"policy:{f.code}" for f in blocking}))
        raise Outcome("rejected", first.message
                      + (f" and {len(blocking) - 1} more finding(s)" if len(blocking) > 1 else ""), codes)
    if backend in BACKENDS and backend not in CPU_BACKENDS and device != "cuda":
        name = "a CUDA" if backend == "cuda" else f"a {backend}"
        raise Outcome("build_error", f"this is {name} solution and the judge runs on the CPU (no CUDA device)")
