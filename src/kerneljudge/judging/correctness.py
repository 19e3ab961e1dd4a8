"""Correctness: the trials, the checks that outputs belong to the caller, and the held-out shapes.

Every output is compared in the trusted reference process under the run's numerics contract; the worst
error seen is kept for the verdict. The ownership checks (threats B10, B11) ride on the first three trials:

    trial 1  output held                         (not shipped again until after trial 2)
    trial 2  fresh inputs; its input tensors kept
             trial 1's held output shipped again -> must still be trial 1's answer (output aliasing)
    trial 3  trial 2's input tensors, new values written into them in place
                                                 -> must be the answer for the new values (stale results)
"""

from __future__ import annotations

import secrets
from typing import Any

from kerneljudge.judging.context import Context, Outcome

OWNERSHIP_CALLS = 3
HELD_OUT_CALLS = 2
# at the shape far below the benchmark one, calls are cheap and a sampled answer's error is largest: an
# "analytical" loss (the expectation instead of the mean) misses there by a few bounds, so every call counts
FAR_BELOW_CALLS = 5


def run_trials(ctx: Context, trial_seeds: list[int]) -> None:
    """Trials 1..n (expected outputs 0..n-1 must be in the reference process already)."""
    for k, seed in enumerate(trial_seeds):
        where = f"trial {k + 1}"
        header: dict[str, Any] = {"cmd": "call", "seed": seed}
        if k == 0:
            header["hold"] = True
        elif k == 1:
            header["keep_inputs"] = True
        elif k == 2:
            header["rewrite"] = True
            where += " (the previous call's input tensors, rewritten in place)"
        reply = ctx.request_output(header)
        try:
            check_output(ctx, k, reply, where)
        except Outcome as out:
            if k == 2 and out.verdict == "wrong_output":
                raise Outcome("wrong_output", f"{out.reason}; a result for the tensors' old values means "
                              "the solution reuses results keyed on input tensor identity (outputs must "
                              "follow the inputs' values)", ("input_rewrite_ignored",)) from None
            raise
        if k == 1:
            _check_held_output(ctx)


def ownership_seeds(trials: int) -> list[int]:
    """Extra calls so that the ownership checks always run (they need three calls)."""
    return [secrets.randbits(62) for _ in range(max(0, OWNERSHIP_CALLS - trials))]


def _check_held_output(ctx: Context) -> None:
    reply = ctx.request_output({"cmd": "ship", "held": True})
    cmp = ctx.compare(0, reply)
    ctx.record_error(cmp.get("detail") or {})
    if not cmp["ok"]:
        raise Outcome("wrong_output", "trial 1's output, still held by the judge, changed when trial 2 ran: "
                      f"{cmp['reason']} (output aliasing: the solution returns memory it writes again on a later "
                      "call; outputs must belong to the caller)", ("output_aliasing",))


def check_output(ctx: Context, index: int, reply: dict[str, Any], where: str) -> dict[str, Any]:
    if "input_mutated" in ctx.flags:
        raise Outcome("rejected", f"the solution modified an input in place ({where})", ("input_mutated",))
    cmp = ctx.compare(index, reply)
    ctx.record_error(cmp.get("detail") or {})  # a wrong output's error is reported too
    if not cmp["ok"]:
        raise Outcome("wrong_output", f"{where}: {cmp['reason']}")
    return cmp


def held_out(ctx: Context) -> None:
    """Correctness at every held-out shape (from the problem's metadata, or derived from its size constants,
    and one far below the benchmark shape), with a new model built at each.

    A solution that is right at the benchmark shape but not at a held-out one gets the blocking flag
    `shape_specialized` under both policies: a wrong output there is `wrong_output`; one that refuses the
    shape (raises, crashes, hangs) stays `correct` at the benchmark shape but is not accepted (threats B6,
    B13: code that branches on the input size must not pass). The flag's note names the shape."""
    for index, preset in enumerate(ctx.held_out):
        shape = ", ".join(f"{k}={v}" for k, v in preset.items())
        if index == ctx.far_below_index:
            shape += "; the variant far below the benchmark shape"
        try:
            _check_shape(ctx, preset, shape, FAR_BELOW_CALLS if index == ctx.far_below_index else HELD_OUT_CALLS)
        except Outcome as out:
            if out.verdict == "wrong_output" and "shape_specialized" in out.flags:
                _note_specialized(ctx, f"wrong at a held-out shape ({shape})")
                raise
            if out.verdict not in ("runtime_error", "timeout", "build_error") or "reference_error" in out.flags:
                raise
            _note_specialized(ctx, f"failed at a held-out shape ({shape}): {out.verdict}: {out.reason}")
            return


def _note_specialized(ctx: Context, note: str) -> None:
    # "at a held-out shape (" is what feedback to a model redacts (generate/redaction.py)
    ctx.flags.add("shape_specialized")
    ctx.info.setdefault("flag_notes", {})["shape_specialized"] = note


def _check_shape(ctx: Context, preset: dict[str, Any], shape: str, calls: int) -> None:
    seeds = [secrets.randbits(62) for _ in range(calls)]
    degenerate = ctx.expect(preset, seeds)
    if degenerate:   # this size cannot judge (a constant would pass): the shape tells nothing either way
        ctx.info.setdefault("held_out_skipped", []).append({"shape": preset, "reason": degenerate["reason"]})
        return
    ctx.request({"cmd": "init", "preset": preset, "init_seed": ctx.init_seed})
    for index, seed in enumerate(seeds):
        reply = ctx.request_output({"cmd": "call", "seed": seed})
        if "input_mutated" in ctx.flags:
            raise Outcome("rejected", "the solution modified an input in place (held-out shape)", ("input_mutated",))
        cmp = ctx.compare(index, reply)
        ctx.record_error(cmp.get("detail") or {})
        if not cmp["ok"]:
            raise Outcome("wrong_output", f"correct at the benchmark shape but wrong at a held-out shape "
                          f"({shape}): {cmp['reason']}", ("shape_specialized",))
