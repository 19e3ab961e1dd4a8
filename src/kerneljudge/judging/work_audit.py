"""What the solution's time is made of: the profile of a few calls (threat C3) and the speed-of-light floor
(threat C4). Both run right after timing, at the judged shape, before the held-out shapes; neither can make a
wrong solution right.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable

from kerneljudge.analysis import kernels
from kerneljudge.judging import speed_of_light
from kerneljudge.judging.context import Context, Outcome

PROFILED_CALLS = 3  # threat C3: calls profiled (solution and reference each); the median one is judged


def profile(ctx: Context, result: dict[str, Any]) -> None:
    """Threat C3: more calls under torch's profiler, in the solution's process; the judge classifies what ran
    (analysis/kernels.py), and compares its library compute with the reference's, profiled the same way in the
    same process. Under strict, library compute doing the work rejects the solution; under lenient it is only
    recorded (and the reference is not profiled). A profile that cannot be taken is recorded and changes nothing
    else."""
    try:
        # the reference's own library work is only compared under strict (kernels.decide): under lenient its
        # profiles would only cost the device's time
        reply = ctx.request({"cmd": "profile", "warm_seed": secrets.randbits(62), "init_seed": ctx.init_seed,
                             "seeds": [secrets.randbits(62) for _ in range(PROFILED_CALLS)],
                             "reference": ctx.options.policy == "strict"})
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


def speed_of_light_check(ctx: Context, result: dict[str, Any], environment: dict[str, Any], cache_dir: str,
                         count: Callable[[str], dict[str, Any]] | None = None) -> None:
    """Threat C4 on a correct, timed GPU run: below the problem's speed-of-light floor is impossible
    (`below_speed_of_light`); at or above the suite's bound, a large speedup is plausible and
    `suspicious_speedup` is dropped. Never changes anything when no bound can be had."""
    sol_ms = result.get("sol_ms")
    if ctx.device != "cuda" or not ctx.options.timing or not isinstance(sol_ms, (int, float)):
        return
    try:
        with ctx.phase("speed_of_light"):
            found = speed_of_light.assess(ctx.problem, ctx.preset, ctx.options.precision, dict(environment),
                                          float(sol_ms), cache_dir, count=count)
    except Exception as exc:  # the bound is an extra check: its failure must not change the verdict
        ctx.info["speed_of_light"] = f"failed: {type(exc).__name__}: {exc}"[:300]
        return
    ctx.info["speed_of_light"] = found.get("note", "")
    ctx.flags.difference_update(found.get("drop", ()))
    ctx.info["speed_plausible"] = "suspicious_speedup" in found.get("drop", ())
    ctx.flags.update(found.get("add", ()))
    if found.get("add"):
        ctx.info.setdefault("flag_notes", {})["below_speed_of_light"] = found["note"]
