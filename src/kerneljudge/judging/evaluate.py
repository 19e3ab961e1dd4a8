"""Judge one solution: static checks, build, correctness, timing, held-out shapes -> Verdict.

The orchestrator side of the protocol. It holds the secret seeds, talks to the solution's child over the
private channel, has the trusted reference process keep and compare the expected outputs, and checks
everything the child claims that it can check. The steps live beside this file: context (the state and the
round trips), correctness (trials, output ownership, held-out shapes), timed (interleaved timing, device
clock), work_audit (profile, speed of light).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import secrets
import subprocess
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.analysis import analyze, detect_backend
from kerneljudge.sandbox.probing import SandboxReport
from kerneljudge.analysis import kernels
from kerneljudge.core import sampling
from kerneljudge.core.problem import Problem
from kerneljudge.shapes.plan import ShapePlan
from kerneljudge.core.types import BLOCKING_FLAGS, JudgeOptions, Verdict
from kerneljudge.judging import boxing, correctness, cores, environment, shapes, timed, turns, warm_start, work_audit
from kerneljudge.judging.build.request import BuildRefused
from kerneljudge.judging.build.store import Builder
from kerneljudge.judging.child import Child
from kerneljudge.judging.context import Context, Outcome, ProblemOutcome
from kerneljudge.judging.reference import ReferenceError, ReferenceService
from kerneljudge.judging.reference_pool import ReferencePool
from kerneljudge.judging.turns import DeviceTurns

TIMED_CHECKS_GPU = 3
TIMED_CHECKS_CPU = 2


@dataclass
class Slot:
    """One device the judge may use: whose turn it is there, its trusted reference processes (one per problem:
    judging/reference_pool.py), its child environment, and the cores its timing processes are pinned to (empty:
    no pinning)."""

    reference: ReferencePool
    env: dict[str, str] = field(default_factory=dict)
    turns: DeviceTurns = field(default_factory=DeviceTurns)
    # CUDA outputs reach the reference process by IPC handle; KERNELJUDGE_IPC=0 forces files in /dev/shm
    ipc: bool = field(default_factory=lambda: os.environ.get("KERNELJUDGE_IPC", "1") != "0")
    timing_cores: tuple[int, ...] = ()
    other_cores: tuple[int, ...] = ()
    builder: Builder | None = None    # the trusted builder (shared by every slot of a judge)
    box: SandboxReport | None = None  # what the box is made of on this machine
    warm_start: bool = True           # fork solution processes from a warm template (judging/warm_start.py)
    # one init seed per problem text: every solution of a problem is judged against the same reference model,
    # so its process builds that model (and measures its workload and floors) once, not once per solution
    init_seeds: dict[str, int] = field(default_factory=dict)

    def init_seed(self, problem: Problem) -> int:
        return self.init_seeds.setdefault(problem.sha256, secrets.randbits(62))


def make_slots(device: str, options: JudgeOptions, count: int, env: dict[str, str] | None = None,
               warm: bool = True, references: int = 1) -> list[Slot]:
    """One slot per device, with the core layout of docs/judging.md (`--reserved-cores`), the box this machine
    offers (raises boxing.SandboxRequired under --require-sandbox when it is incomplete) and one builder.

    `warm`: solution processes fork from a warm template, started here. Right for a judge that will judge
    several solutions; for a single one a template only adds its own start to the way (it imports Triton
    too, and checks a fork of it can use the GPU), so it is started cold. `references`: reference processes
    per slot (reference_pool.process_limit for a batch; one for a judge of one solution at a time)."""
    cache = options.cache_dir or default_cache_dir()
    report = boxing.session_report(options.require_sandbox)
    layout = cores.plan_cores(count, device, options.threads, options.reserved_cores)
    build_env = environment.child_env(device, options.threads, cache, env)
    # a box missing a layer could let a solution touch a build folder: then nothing built is reused
    builder = Builder(environment.build_root(cache), build_env, cuda_arch_list=_arch_list(device),
                      reuse=report.complete, cores=layout.builds if layout.active else ())
    slots = []
    for i in range(count):
        slot_env = {**(env or {}), **_device_env(device, i)}
        if warm and warm_start.enabled():  # the slot's solution processes fork from it; its imports start now
            warm_start.prepare(boxing.start_env(environment.child_env(device, options.threads, cache, slot_env)))
        def service(slot_env: dict[str, str] = slot_env,
                    timing: tuple[int, ...] = layout.timing[i]) -> ReferenceService:
            return ReferenceService(device, options.precision, options.threads, cache, env=slot_env, cores=timing,
                                    models_kept=turns.checks_at_once(options, device) + 1)
        reference = ReferencePool(service, references, layout.builds if layout.active else ())
        slots.append(Slot(reference, env=slot_env, timing_cores=layout.timing[i], other_cores=layout.builds,
                          builder=builder, box=report, warm_start=warm))
    return slots


def _arch_list(device: str) -> str:
    """The GPU's own architecture for CUDA builds ("9.0"), read without initialising CUDA here."""
    if device != "cuda":
        return ""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        caps = sorted({line.strip() for line in done.stdout.splitlines() if line.strip()})
        return ";".join(caps)
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _device_env(device: str, index: int) -> dict[str, str]:
    if device != "cuda":
        return {}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [d for d in visible.split(",") if d.strip()] if visible else None
    return {"CUDA_VISIBLE_DEVICES": ids[index] if ids else str(index)}


def evaluate(problem: Problem, solution_path: str, options: JudgeOptions, slot: Slot, device: str,
             plan: ShapePlan | None = None) -> Verdict:
    """Judge one solution file. Never raises for anything the solution does; raises OSError if unreadable."""
    reference = slot.reference.acquire(problem.sha256)
    try:
        return _evaluate(problem, solution_path, options, slot, device, plan, reference)
    finally:
        slot.reference.release(reference)


def judged_preset(problem: Problem, plan: ShapePlan, options: JudgeOptions, device: str) -> tuple[bool, dict]:
    """(small, the preset's constants) a solution of this problem is judged at."""
    small = options.preset == "small" or (options.preset == "auto" and device == "cpu")
    if small and plan.source["small"] == "none":
        small = False
    return small, dict(plan.small) if small else {}


def _evaluate(problem: Problem, solution_path: str, options: JudgeOptions, slot: Slot, device: str,
              plan: ShapePlan | None, reference: ReferenceService) -> Verdict:
    started = time.monotonic()
    solution_path = str(Path(solution_path).resolve())  # the solution's process works in its own folder
    text = Path(solution_path).read_text()
    backend = detect_backend(text)
    findings = analyze(text, options.policy, backend)
    plan = plan if plan is not None else shapes.resolve(problem, _cache(options))
    small, preset = judged_preset(problem, plan, options, device)
    far_below = plan.far_below_for(small) if options.held_out else None
    ctx = Context(problem, options, device, reference, small, preset,
                  held_out=plan.held_out_for(small) if options.held_out else [], init_seed=slot.init_seed(problem),
                  far_below_index=far_below["index"] if far_below else None)
    ctx.transport = "ipc" if device == "cuda" and slot.ipc else "file"
    ctx.info["backend"] = backend
    # the solution's own kernel names, read from its source here (for the profile, threat C3)
    ctx.info["custom_kernels"] = kernels.custom_kernel_names(text)
    ctx.info["header_libraries"] = kernels.header_libraries(text)
    base = dict(problem=problem.path, solution=solution_path, problem_id=problem.id,
                backend=backend, policy=options.policy, precision=options.precision, device=device,
                problem_sha256=problem.sha256, solution_sha256=hashlib.sha256(text.encode()).hexdigest(),
                preset="small" if small else "default", findings=tuple(f.to_dict() for f in findings),
                contract=options.numerics,
                shapes={"preset": preset, "held_out": ctx.held_out, "source": dict(plan.source),
                        "far_below": far_below})
    if options.numerics == "kernelbench":
        ctx.flags.add("kernelbench_tolerance")
    result: dict[str, Any] = {}
    problem_outcome = None
    try:
        _static_gate(findings, backend, device, options)
        _run(ctx, solution_path, result, slot)
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
        if _out_of_memory(reason + excerpt):   # other problems' idle reference processes may hold the memory
            slot.reference.shrink(keep=ctx.reference)
        failed = _reference_fails_alone(ctx, slot)
        if failed:   # not the solution's doing: the reference fails with no solution process beside it
            verdict, reason, problem_outcome = "unjudgeable", failed.reason, failed.describe()
    crowded = ctx.info.get("crowded") or "reference_error" in ctx.flags   # other checks, or other references
    if verdict != "correct" and problem_outcome is None and crowded and _out_of_memory(reason + excerpt) \
            and turns.checks_at_once(options, device) > 1:
        # other solutions' checks shared the device, and their memory may be what ran out: judged again, with
        # the device to itself (checks_at_once=1 cannot come back here)
        again = _evaluate(problem, solution_path, dataclasses.replace(options, checks_at_once=1), slot, device, plan,
                          reference)
        return dataclasses.replace(again, flags=tuple(sorted({*again.flags, "checked_alone_again"})),
                                   wall_s=round(time.monotonic() - started, 3))
    if problem_outcome is not None:
        ctx.flags.discard("reference_error")
    if ctx.info.get("held_out_skipped"):
        base["shapes"] = {**base["shapes"], "held_out_skipped": ctx.info["held_out_skipped"]}
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
        clock=result.get("clock", options.clock), device_clock=result.get("device_clock"),
        max_error=ctx.max_error, numerics=ctx.numerics, device_name=str(env.get("device_name", "")),
        versions={k: str(env[k]) for k in ("python", "torch", "triton", "cuda", "driver") if k in env},
        build_s=ctx.phases.get("build"), builds=list(ctx.info.get("builds", [])),
        wall_s=round(time.monotonic() - started, 3), phases_s=dict(ctx.phases),
        profile=list(ctx.info.get("profile", [])), sandbox=dict(ctx.info.get("sandbox", {})),
        problem_outcome=problem_outcome, **base,
    )


def _reference_fails_alone(ctx: Context, slot: Slot) -> ProblemOutcome | None:
    """After the reference failed while a solution was being judged: does it fail again with the device to
    itself and no solution process alive (the solution's is killed by now)? Then the problem cannot run here,
    a problem-level outcome; else the failure stays the solution's (it may have taken the memory)."""
    try:
        with slot.turns.alone():
            ctx.reference.expect(secrets.token_hex(8), ctx.problem.path, ctx.preset, ctx.init_seed,
                                  [secrets.randbits(62) for _ in range(2)], ctx.options.numerics)
    except ReferenceError as exc:
        return ProblemOutcome("reference_failed", "the problem's reference fails to run here, also alone: "
                              + (str(exc).strip().splitlines() or ["no message"])[-1][:300])
    return None


def _out_of_memory(text: str) -> bool:
    lowered = text.lower()
    return any(m in lowered for m in ("out of memory", "cudaerrormemoryallocation", "cuda_error_out_of_memory"))


def _choose_clock(ctx: Context, result: dict[str, Any]) -> None:
    """`speedup` is the end-to-end one unless the user chose the device clock and both device times exist."""
    if "speedup_end_to_end" not in result:
        return
    use_device = ctx.options.clock == "device" and result.get("speedup_device") is not None
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
    if backend == "cuda" and device != "cuda":
        raise Outcome("build_error", "this is a CUDA solution and the judge runs on the CPU (no CUDA device)")


def _run(ctx: Context, solution_path: str, result: dict[str, Any], slot: Slot) -> None:
    opts, problem = ctx.options, ctx.problem
    ctx.reference.start()  # its start overlaps the solution's (a no-op when it is running already)
    report = slot.box or boxing.session_report(opts.require_sandbox)
    base_env = environment.child_env(ctx.device, opts.threads, _cache(opts), slot.env)
    template = boxing.triton_template(_cache(opts), base_env) \
        if ctx.device == "cuda" and ctx.info.get("backend") == "triton" else None
    box = boxing.make_box(report, base_env, [problem.path, solution_path], ctx.device, ctx.transport == "ipc",
                          template)
    ctx.exchange = box.exchange
    ctx.on_outputs = box.remember_ipc
    ctx.on_build = lambda request, left: _build(slot, box, request, left, ctx)
    if not report.complete:
        ctx.flags.add("unsandboxed")
    # until its first turn the solution's process shares the device with every other process on it: running out
    # of device memory there (its CUDA context, its import) is judged again alone, as in a crowded check
    ctx.info["crowded"] = True
    try:
        ctx.deadline = time.monotonic() + opts.build_timeout_s
        with ctx.phase("build"):
            boxed = _start_solution_process(ctx, box, slot)
            ctx.info["sandbox"] = box.verdict_fields({k: boxed.get(k) for k in ("layers", "missing", "narrowed")})
            ctx.info["sandbox"]["started"] = "warm" if ctx.child.warm else "cold"  # judging/warm_start.py
            reply = ctx.request({"cmd": "load", "problem_path": problem.path, "solution_path": solution_path,
                                 "device": ctx.device, "precision": opts.precision, "threads": opts.threads})
        ctx.info["environment"] = reply.get("environment", {}) if isinstance(reply.get("environment"), dict) else {}
        # Everything that touches the device happens in a turn on it (judging/turns.py): checks may share the
        # device with other solutions' checks, timing has it alone, on the quiet cores.
        hold = turns.Hold(slot.turns, turns.checks_at_once(opts, ctx.device), lambda s: _waited(ctx, s),
                          lambda alone: _pin_timed(ctx, slot, alone))
        try:
            hold.check()
            try:
                _judge_on_device(ctx, result, slot, hold)
            finally:
                ctx.reference.forget(ctx.token)
        finally:
            hold.release()
            ctx.info["crowded"] = hold.crowded
    finally:
        if ctx.child is not None:
            ctx.child.kill()  # nothing may still write into the box's folders while they are removed
        box.remove()


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
            return ctx.request({"cmd": "box", "device": ctx.device, "ipc": ctx.transport == "ipc"})
        except Outcome as out:
            if not ctx.child.warm:
                raise
            ctx.child.kill()
            warm.retire(f"a fork of it failed before any solution code ran: {out.verdict}: {out.reason}"[:500])
            warm = None


def _build(slot: Slot, box: boxing.SolutionBox, request: Any, seconds_left: float, ctx: Context) -> dict[str, Any]:
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


def _judge_on_device(ctx: Context, result: dict[str, Any], slot: Slot, hold: turns.Hold) -> None:
    opts = ctx.options
    ctx.deadline = time.monotonic() + opts.run_timeout_s
    plan = sampling.SamplingPlan(ctx.device, opts.time_budget_s)
    checks = TIMED_CHECKS_GPU if ctx.device == "cuda" else TIMED_CHECKS_CPU
    trial_seeds = [secrets.randbits(62) for _ in range(opts.trials)]
    trial_seeds += correctness.ownership_seeds(len(trial_seeds))
    check_at = sorted(random.SystemRandom().sample(range(plan.min_samples), checks)) if opts.timing else []
    check_seeds = {i: secrets.randbits(62) for i in check_at}
    with ctx.phase("reference_outputs"):
        degenerate = ctx.expect(ctx.preset, trial_seeds + list(check_seeds.values()))
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
        work_audit.speed_of_light_check(ctx, result, slot.reference.environment, _cache(opts), slot.reference.count)
        timed.device_clock(ctx, result)
    if ctx.held_out:
        hold.check()
        with ctx.phase("held_out"):
            correctness.held_out(ctx)


def _cache(options: JudgeOptions) -> str:
    return options.cache_dir or default_cache_dir()
