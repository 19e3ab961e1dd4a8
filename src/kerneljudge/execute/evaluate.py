"""Judge one solution: static checks, build, correctness, timing, held-out shapes -> Verdict.

The orchestrator side of the protocol. It holds the secret seeds and the reference outputs, talks to the
solution's child over the private channel, and checks everything the child claims that it can check.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import random
import secrets
import shutil
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .. import channel
from ..analysis import analyze, detect_backend
from ..analysis import kernels
from ..harness import compare, timing
from ..problem import Problem
from ..types import BLOCKING_FLAGS, JudgeOptions, Verdict
from . import environment, speed_of_light
from .child import Child
from .reference import ReferenceError, ReferenceService

# integrity flags a solution's process may report about itself (anything else it sends is ignored)
CHILD_FLAGS = frozenset({"timer_tampered", "global_flags_changed", "thread_alive", "input_mutated"})
TIMED_CHECKS_GPU = 3
TIMED_CHECKS_CPU = 2
PROFILED_CALLS = 3  # threat C3: calls profiled (solution and reference each); the median one is judged


class Outcome(Exception):
    """Raised inside the flow to end judging with a verdict."""

    def __init__(self, verdict: str, reason: str, flags: tuple[str, ...] = (), excerpt: str = ""):
        super().__init__(reason)
        self.verdict, self.reason, self.flags, self.excerpt = verdict, reason, flags, excerpt


@dataclass
class Context:
    problem: Problem
    options: JudgeOptions
    device: str
    reference: ReferenceService
    small: bool
    preset: dict[str, Any]
    init_seed: int = field(default_factory=lambda: secrets.randbits(62))
    flags: set[str] = field(default_factory=set)
    child: Child | None = None
    deadline: float = math.inf
    info: dict[str, Any] = field(default_factory=dict)
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    exchange: str = ""
    outputs_written: int = 0
    transport: str = "file"  # how outputs reach the reference process: "ipc" (CUDA) or "file"
    phases: dict[str, float] = field(default_factory=dict)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the wall time of a block to phases[name] (the verdict shows where judging time went)."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = round(self.phases.get(name, 0.0) + time.monotonic() - started, 3)

    def request(self, header: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """One round trip to the solution child; a dead or silent child becomes a verdict."""
        remaining = self.deadline - time.monotonic() if timeout is None else timeout
        if remaining <= 0:
            raise Outcome("timeout", "ran past the run time limit", excerpt=self.child.output.text())
        try:
            self.child.send(header)
            reply, _ = self.child.recv(remaining, max_payload=0)  # outputs travel as files, never here
        except channel.ChannelTimeout:
            phase = "build" if header.get("cmd") == "load" else "run"
            limit = self.options.build_timeout_s if phase == "build" else self.options.run_timeout_s
            raise Outcome("timeout", f"no answer within the {phase} time limit of {limit:g} s "
                          f"(during '{header.get('cmd')}')", excerpt=self.child.output.text()) from None
        except (channel.ChannelClosed, OSError):
            how = self.child.exit_description()
            verdict = "build_error" if header.get("cmd") == "load" else "runtime_error"
            raise Outcome(verdict, f"the solution's process died during '{header.get('cmd')}' ({how})",
                          excerpt=self.child.output.text()) from None
        except channel.ProtocolError as exc:
            raise Outcome("rejected", f"the solution's process broke the judge protocol: {exc}",
                          ("protocol_violation",), self.child.output.text()) from None
        reported = reply.get("flags")
        if isinstance(reported, list):
            self.flags.update(f for f in reported if f in CHILD_FLAGS)
        if reply.get("status") != "ok":
            raise _error_outcome(reply, self.child.output.text())
        return reply

    def expect(self, preset: dict[str, Any], seeds: list[int]) -> None:
        """The reference process computes and keeps the outputs for these seeds (indices 0..n-1)."""
        self.reference.expect(self.token, self.problem.path, preset, self.init_seed, seeds)

    def request_output(self, header: dict[str, Any]) -> dict[str, Any]:
        """A request whose answer is an output: shared by CUDA IPC, or written to a fresh file in the exchange
        folder (the child falls back to the file when its memory cannot be shared)."""
        self.outputs_written += 1
        path = os.path.join(self.exchange, f"out{self.outputs_written}.bin")
        reply = self.request({**header, "out_path": path, "transport": self.transport})
        reply["path"] = path
        # IPC only when it was asked for: the child does not get to pick how the reference reads its output
        reply["transport"] = "ipc" if self.transport == "ipc" and reply.get("transport") == "ipc" else "file"
        return reply

    def compare(self, index: int, reply: dict[str, Any]) -> dict[str, Any]:
        """Have the trusted reference process compare a handed-over output with expected output `index`."""
        structure, metas = reply.get("structure"), reply.get("metas")
        if not compare.structure_ok(structure, metas):
            raise Outcome("rejected", "the solution's process described its output in a malformed way",
                          ("protocol_violation",))
        try:
            with self.phase("outputs"):
                result = self.reference.check(self.token, index, structure, reply["path"], metas,
                                              self.problem.metadata.get("TOLERANCE"), reply["transport"])
        finally:
            with contextlib.suppress(OSError):
                os.remove(reply["path"])
        if result.get("ipc_unavailable"):
            # the driver would not open the handle: this output, and the rest, come as files
            self.transport = "file"
            self.info["ipc_unavailable"] = str(result.get("reason", ""))[:300]
            return self.compare(index, self.request_output({"cmd": "ship"}))
        if result.get("protocol_error"):
            raise Outcome("rejected", f"the solution's process broke the judge protocol: {result['reason']}",
                          ("protocol_violation",))
        return result


def _error_outcome(reply: dict[str, Any], output: str) -> Outcome:
    kind = reply.get("kind", "runtime_error")
    message = str(reply.get("message", ""))
    excerpt = (message + ("\n--- output ---\n" + output if output.strip() else ""))[-4000:]
    last_line = message.strip().splitlines()[-1] if message.strip() else kind
    if kind == "build_error":
        return Outcome("build_error", f"the solution failed to build: {last_line}", excerpt=excerpt)
    if kind == "bad_output":
        if "subclass" in message:
            return Outcome("rejected", message, ("lazy_output",), excerpt)
        return Outcome("wrong_output", message, excerpt=excerpt)
    if kind == "reference_error":
        return Outcome("runtime_error", f"the problem's reference failed in the solution process: {last_line}",
                       ("reference_error",), excerpt)
    return Outcome("runtime_error", f"the solution raised: {last_line}", excerpt=excerpt)


@dataclass
class Slot:
    """One device the judge may use: its lock, its trusted reference process, its child environment."""

    reference: ReferenceService
    env: dict[str, str] = field(default_factory=dict)
    lock: Any = field(default_factory=threading.Lock)
    # CUDA outputs reach the reference process by IPC handle; KERNELJUDGE_IPC=0 forces files in /dev/shm
    ipc: bool = field(default_factory=lambda: os.environ.get("KERNELJUDGE_IPC", "1") != "0")


def evaluate(problem: Problem, solution_path: str, options: JudgeOptions, slot: Slot, device: str) -> Verdict:
    """Judge one solution file. Never raises for anything the solution does; raises OSError if unreadable."""
    started = time.monotonic()
    text = Path(solution_path).read_text()
    backend = detect_backend(text)
    findings = analyze(text, options.policy, backend)
    small = options.preset == "small" or (options.preset == "auto" and device == "cpu")
    if small and not problem.metadata.get("SMALL"):
        small = False
    ctx = Context(problem, options, device, slot.reference, small, problem.preset("small") if small else {})
    ctx.transport = "ipc" if device == "cuda" and slot.ipc else "file"
    # the solution's own kernel names, read from its source here (for the profile, threat C3)
    ctx.info["custom_kernels"] = kernels.custom_kernel_names(text)
    ctx.info["header_libraries"] = kernels.header_libraries(text)
    base = dict(problem=problem.path, solution=str(Path(solution_path).resolve()), problem_id=problem.id,
                backend=backend, policy=options.policy, precision=options.precision, device=device,
                problem_sha256=problem.sha256, solution_sha256=hashlib.sha256(text.encode()).hexdigest(),
                preset="small" if small else "default", findings=tuple(f.to_dict() for f in findings))
    result: dict[str, Any] = {}
    try:
        _static_gate(findings, backend, device, options)
        _run(ctx, solution_path, result, slot)
        _speed_of_light(ctx, result, slot)
        verdict, reason, excerpt = "correct", "matches the reference", ""
    except Outcome as out:
        verdict, reason, excerpt = out.verdict, out.reason, out.excerpt
        ctx.flags.update(out.flags)
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
    if verdict == "correct" and "input_mutated" in ctx.flags:
        verdict, reason = "rejected", "the solution changed its inputs in place"
    flags = tuple(sorted(ctx.flags))
    blocking = [f for f in flags if f in BLOCKING_FLAGS]
    accepted = verdict == "correct" and not blocking
    if verdict == "correct" and blocking:
        reason = f"correct, but not accepted: {', '.join(blocking)}"
        notes = [ctx.info["flag_notes"][f] for f in blocking if f in ctx.info.get("flag_notes", {})]
        reason += f" ({'; '.join(notes)})" if notes else ""
    # the trusted reference process's description of the machine wins over what the child reported
    env = {**ctx.info.get("environment", {}), **slot.reference.environment}
    return Verdict(
        verdict=verdict, accepted=accepted, reason=reason, flags=flags, error_excerpt=excerpt,
        speedup=result.get("speedup") if verdict == "correct" else None,
        ref_ms=result.get("ref_ms"), sol_ms=result.get("sol_ms"),
        ref_timing=result.get("ref_timing"), sol_timing=result.get("sol_timing"),
        max_error=result.get("max_error"), device_name=str(env.get("device_name", "")),
        versions={k: str(env[k]) for k in ("python", "torch", "triton", "cuda", "driver") if k in env},
        build_s=ctx.phases.get("build"), wall_s=round(time.monotonic() - started, 3), phases_s=dict(ctx.phases),
        profile=list(ctx.info.get("profile", [])), **base,
    )


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
    ctx.child = Child("kerneljudge.harness.solution_worker",
                      environment.child_env(ctx.device, opts.threads, _cache(opts), slot.env))
    ctx.deadline = time.monotonic() + opts.build_timeout_s
    with ctx.phase("build"):
        reply = ctx.request({"cmd": "load", "problem_path": problem.path, "solution_path": solution_path,
                             "device": ctx.device, "precision": opts.precision, "threads": opts.threads,
                             "build_root": environment.build_root(_cache(opts))})
    ctx.info["environment"] = reply.get("environment", {}) if isinstance(reply.get("environment"), dict) else {}
    # Everything that touches the device happens under the slot's lock: one judged model at a time.
    ctx.exchange = tempfile.mkdtemp(prefix="kj-out-", dir=_exchange_root())
    try:
        with ctx.phase("wait_for_device"):
            slot.lock.acquire()
        try:
            try:
                _judge_on_device(ctx, result)
            finally:
                ctx.reference.forget(ctx.token)
        finally:
            slot.lock.release()
    finally:
        ctx.child.kill()  # nothing may still write into the exchange folder while it is removed
        shutil.rmtree(ctx.exchange, ignore_errors=True)


def _judge_on_device(ctx: Context, result: dict[str, Any]) -> None:
    opts, problem = ctx.options, ctx.problem
    ctx.deadline = time.monotonic() + opts.run_timeout_s
    plan = timing.SamplingPlan(ctx.device, opts.time_budget_s)
    checks = TIMED_CHECKS_GPU if ctx.device == "cuda" else TIMED_CHECKS_CPU
    trial_seeds = [secrets.randbits(62) for _ in range(opts.trials)]
    check_at = sorted(random.SystemRandom().sample(range(plan.min_samples), checks)) if opts.timing else []
    check_seeds = {i: secrets.randbits(62) for i in check_at}
    with ctx.phase("reference_outputs"):
        ctx.expect(ctx.preset, trial_seeds + list(check_seeds.values()))
    with ctx.phase("init"):
        ctx.request({"cmd": "init", "preset": ctx.preset, "init_seed": ctx.init_seed})
    with ctx.phase("trials"):
        for k, seed in enumerate(trial_seeds):
            reply = ctx.request_output({"cmd": "call", "seed": seed})
            _check_output(ctx, k, reply, f"trial {k + 1}", result)
    if opts.timing:
        check_index = {i: len(trial_seeds) + n for n, i in enumerate(sorted(check_seeds))}
        _time(ctx, plan, check_seeds, check_index, result)
    if opts.held_out:
        with ctx.phase("held_out"):
            _held_out(ctx)
    if opts.timing:
        with ctx.phase("profile"):
            _profile(ctx, result)


def _check_output(ctx: Context, index: int, reply: dict[str, Any], where: str, result: dict[str, Any]) -> None:
    if "input_mutated" in ctx.flags:
        raise Outcome("rejected", f"the solution modified an input in place ({where})", ("input_mutated",))
    cmp = ctx.compare(index, reply)
    if not cmp["ok"]:
        raise Outcome("wrong_output", f"{where}: {cmp['reason']}")
    detail = cmp.get("detail") or {}
    if detail.get("rel_l2", 0) >= (result.get("max_error") or {}).get("rel_l2", -1):
        result["max_error"] = detail


def _time(ctx: Context, plan: timing.SamplingPlan, check_seeds: dict[int, int], check_index: dict[int, int],
          result: dict[str, Any]) -> None:
    opts = ctx.options
    with ctx.phase("reference_timing"):
        ref_stats = ctx.reference.timing(ctx.problem.sha256, ctx.problem.path, ctx.preset, ctx.init_seed,
                                         opts.time_budget_s)
    with ctx.phase("solution_timing"):
        _time_solution(ctx, plan, check_seeds, check_index, result, ref_stats)


def _time_solution(ctx: Context, plan: timing.SamplingPlan, check_seeds: dict[int, int],
                   check_index: dict[int, int], result: dict[str, Any], ref_stats: dict[str, Any]) -> None:
    opts = ctx.options
    warm: list[float] = []
    start = time.monotonic()
    while not plan.warm(warm, time.monotonic() - start):
        warm.append(_timed_call(ctx, secrets.randbits(62))[0])
    samples: list[float] = []
    clocks: list[str] = []
    gaps: list[float] = []
    start = time.monotonic()
    checking_s = 0.0  # re-checking outputs is the judge's cost, not the solution's: kept out of the budget
    while not plan.done(samples, time.monotonic() - start - checking_s) \
            or len(samples) <= max(check_seeds, default=-1):
        i = len(samples)
        ms, clock, gap = _timed_call(ctx, check_seeds.get(i, secrets.randbits(62)))
        samples.append(ms)
        clocks.append(clock)
        gaps.append(gap)
        if i in check_index:
            check_started = time.monotonic()
            cmp = ctx.compare(check_index[i], ctx.request_output({"cmd": "ship"}))
            checking_s += time.monotonic() - check_started
            if not cmp["ok"]:
                raise Outcome("rejected", f"timed call {i + 1} returned a wrong output ({cmp['reason']}): "
                              "outputs of timed calls must be as correct as the checked ones",
                              ("timed_output_mismatch",))
    sol_stats = timing.summarize(samples, len(warm), clocks)
    _cross_check(ctx, sol_stats, ref_stats, gaps)
    ref_ms, sol_ms = ref_stats["median_ms"], sol_stats["median_ms"]
    result.update(ref_ms=ref_ms, sol_ms=sol_ms, ref_timing=ref_stats, sol_timing=sol_stats)
    result["speedup"] = ref_ms / sol_ms if sol_ms > 0 else math.inf
    if result["speedup"] > opts.speedup_review_threshold:
        ctx.flags.add("suspicious_speedup")


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
    gap = timing.median_ci(gaps)[0]
    # a CPU shares its cores with builds and the orchestrator (a batch builds while it times), so its
    # round trips stretch more; there is no asynchronous device there to hide work on either
    gpu = ctx.device == "cuda"
    allowance = float(ref_stats.get("overhead_ms", 0.0)) + (0.75 if gpu else 5.0) \
        + (0.5 if gpu else 1.0) * sol_stats["median_ms"]
    ctx.info["unreported_ms"] = gap
    if gap > allowance:
        ctx.flags.add("timing_inconsistent")


def _held_out(ctx: Context) -> None:
    for preset in ctx.problem.held_out(ctx.small):
        seeds = [secrets.randbits(62) for _ in range(2)]
        ctx.expect(preset, seeds)
        ctx.request({"cmd": "init", "preset": preset, "init_seed": ctx.init_seed})
        for index, seed in enumerate(seeds):
            reply = ctx.request_output({"cmd": "call", "seed": seed})
            if "input_mutated" in ctx.flags:
                raise Outcome("rejected", "the solution modified an input in place (held-out shape)")
            cmp = ctx.compare(index, reply)
            if not cmp["ok"]:
                shape = ", ".join(f"{k}={v}" for k, v in preset.items())
                raise Outcome("wrong_output", f"correct at the benchmark shape but wrong at a held-out shape "
                              f"({shape}): {cmp['reason']}", ("shape_specialized",))


def _profile(ctx: Context, result: dict[str, Any]) -> None:
    """Threat C3: more calls under torch's profiler, in the solution's process; the judge classifies what ran
    (analysis/kernels.py), and compares its library compute with the reference's, profiled the same way in the
    same process. Under strict, library compute doing the work rejects the solution; under lenient it is only
    recorded. A profile that cannot be taken is recorded and changes nothing else."""
    try:
        if ctx.options.held_out and ctx.problem.held_out(ctx.small):
            # held-out shapes came last: back to the judged shape, which the timing measured
            ctx.request({"cmd": "init", "preset": ctx.preset, "init_seed": ctx.init_seed})
        reply = ctx.request({"cmd": "profile", "warm_seed": secrets.randbits(62), "init_seed": ctx.init_seed,
                             "seeds": [secrets.randbits(62) for _ in range(PROFILED_CALLS)]})
    except Outcome as out:
        if out.verdict == "rejected":  # a broken protocol stays a broken protocol
            raise
        return _profile_failed(ctx, f"{out.verdict}: {out.reason}")
    runs, references = reply.get("profiles"), reply.get("reference_profiles") or []
    if not isinstance(runs, list) or not runs or not isinstance(references, list):
        return _profile_failed(ctx, str(reply.get("profile_error") or "the reply carried no profile"))
    custom, libraries = ctx.info.get("custom_kernels", ()), ctx.info.get("header_libraries", ())
    try:
        summary = kernels.median_run([kernels.classify(run, custom, libraries) for run in runs[:PROFILED_CALLS]])
        if references:
            reference = kernels.median_run([kernels.classify(run) for run in references[:PROFILED_CALLS]])
            if reference.total_us > 0:
                summary.reference_library_us = reference.by_class["library_compute"]
                summary.reference_library_calls = reference.library_calls
    except kernels.ProfileError as exc:
        return _profile_failed(ctx, f"malformed profile: {exc}")
    if summary.total_us <= 0:  # e.g. CUPTI unavailable: nothing to judge, and nothing to hold against anyone
        return _profile_failed(ctx, "the profiler recorded no activity")
    ctx.info["profile"] = summary.to_rows()
    why = kernels.decide(summary, result.get("ref_ms"))
    if why and ctx.options.policy == "strict":
        raise Outcome("rejected", why, ("library_compute",))


def _profile_failed(ctx: Context, why: str) -> None:
    lines = [ln.strip() for ln in why.strip().splitlines() if ln.strip()]
    text = lines[-1] if lines else "unknown"
    ctx.info["profile"] = [{"name": "(profiling failed)", "class": "error", "error": text[:300]}]
    ctx.flags.add("profile_failed")


def _speed_of_light(ctx: Context, result: dict[str, Any], slot: Slot) -> None:
    """Threat C4 on a correct, timed GPU run: below the problem's speed-of-light floor is impossible
    (`below_speed_of_light`); at or above the suite's bound, a large speedup is plausible and
    `suspicious_speedup` is dropped. Never changes anything when no bound can be had."""
    sol_ms = result.get("sol_ms")
    if ctx.device != "cuda" or not ctx.options.timing or not isinstance(sol_ms, (int, float)):
        return
    try:
        with ctx.phase("speed_of_light"):
            found = speed_of_light.assess(ctx.problem, ctx.preset, ctx.options.precision,
                                          dict(slot.reference.environment), float(sol_ms), _cache(ctx.options))
    except Exception as exc:  # the bound is an extra check: its failure must not change the verdict
        ctx.info["speed_of_light"] = f"failed: {type(exc).__name__}: {exc}"[:300]
        return
    ctx.info["speed_of_light"] = found.get("note", "")
    ctx.flags.difference_update(found.get("drop", ()))
    ctx.flags.update(found.get("add", ()))
    if found.get("add"):
        ctx.info.setdefault("flag_notes", {})["below_speed_of_light"] = found["note"]


def _exchange_root() -> str | None:
    """Shared memory when the machine has it: outputs pass through RAM, not disk."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _cache(options: JudgeOptions) -> str:
    return options.cache_dir or environment.default_cache_dir()
