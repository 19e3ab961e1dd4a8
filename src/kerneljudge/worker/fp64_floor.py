"""The reference's own fp32 error: its fp32 output against its float64 forward (a floor under fp32 bounds).

The rounding-error analysis (numerics/bounds.py) assumes that a chain passes each rounding on at about its own
size. Cancellation breaks that: an output much smaller than the values it was computed from (a difference of
near-equal terms, the mean of a normalised tensor) carries their rounding errors at their size, not its own.
So the reference process runs the reference forward once more per model, in float64 on the first trial's
inputs, and measures how far the fp32 output is from it. That is an honest fp32 computation's own error on
this problem; another honest summation order errs by about as much again, so the bounds of an fp32 run are
never below bounds.FP64_FLOOR_MARGIN times it. Where the error is a sizeable share of the output, the output
is rounding noise and cannot tell a right answer from a wrong one (worker/degenerate.py).
Only trusted code runs here: the problem's reference Model in the reference process.
"""

from __future__ import annotations

from typing import Any

import torch

from kerneljudge.worker import loading
from kerneljudge.numerics import bounds
from kerneljudge.numerics import classes as numerics, reduced_precision


def measure(problem: Any, model: torch.nn.Module, seed: int, device: str,
            expected: list[torch.Tensor]) -> list[dict[str, float] | None]:
    """One floor per output tensor ({"rel_l2", "max_rel_err"} of `expected`, the fp32 outputs on seed's inputs,
    against the float64 forward rounded to fp32), or None where it cannot be had (a forward float64 cannot
    run, an integer output, memory)."""
    try:
        inputs = loading.make_inputs(problem, seed, device, "fp32")
        twin, twin_inputs = reduced_precision.as_fp64(model, inputs)
        del inputs
        with torch.no_grad():
            _, tensors = loading.flatten_output(twin(*twin_inputs), device)
        del twin, twin_inputs
    except Exception:  # float64 not supported by an op, out of memory: the analysis alone decides
        return [None] * len(expected)
    finally:
        if device == "cuda":
            torch.cuda.empty_cache()
    if len(tensors) != len(expected):
        return [None] * len(expected)
    return [_floor(r, t) for r, t in zip(expected, tensors)]


def _floor(ref: torch.Tensor, wide: torch.Tensor) -> dict[str, float] | None:
    if ref.dtype != torch.float32 or wide.dtype != torch.float64 or wide.shape != ref.shape:
        return None
    found = numerics.measure(ref, wide.to(ref.device, torch.float32), "fp32", bounds.Workload())
    if found["rel_l2"] is None or found["max_rel_err"] is None or found.get("why_wrong"):
        return None
    return {"rel_l2": found["rel_l2"], "max_rel_err": found["max_rel_err"]}
