"""The reference's own TF32 error: the floor under the tf32 class's bounds (harness/numerics.py).

The rounding-error analysis bounds how far TF32 operands can move an output when each stage passes errors on
at about their own size. Some computations amplify them: a softmax turns an absolute logit error into a
relative output error (large logits, long sequences), and a top-k router picks another expert when TF32
moves two logits past each other. On the H200 such problems rejected honest TF32 and fp16-operand variants
of their own reference (results/2026-12-01-h200-numerics-calibration.md). So the reference process runs the
reference forward once more per model, on the first trial's inputs, with every matmul-like operand rounded
to TF32 (round to nearest, emulated, so it is not the same rounding as any GPU library a solution calls),
and measures that output's error against the fp32 one. The tf32 bounds are never below FLOOR_MARGIN times it.
Only trusted code runs here: the problem's reference Model in the reference process.
"""

from __future__ import annotations

from typing import Any

import torch

from . import loading, numerics, reduced_precision


def measure(problem: Any, model: torch.nn.Module, seed: int, device: str,
            expected: list[torch.Tensor]) -> list[dict[str, float] | None]:
    """One floor per output tensor ({"rel_l2", "max_rel_err"}, or None where it cannot be had), from the
    reference forward on the inputs of `seed` with TF32-rounded matmul operands, against `expected` (the fp32
    outputs on the same inputs)."""
    try:
        inputs = loading.make_inputs(problem, seed, device, "fp32")
        with torch.no_grad(), reduced_precision.running_as("tf32", device, emulate=True):
            _, tensors = loading.flatten_output(model(*inputs), device)
    except Exception:  # a forward the rounding mode cannot run: the analysis alone decides
        return [None] * len(expected)
    if len(tensors) != len(expected):
        return [None] * len(expected)
    return [_floor(r, t) for r, t in zip(expected, tensors)]


def _floor(ref: torch.Tensor, got: torch.Tensor) -> dict[str, float] | None:
    if not ref.is_floating_point() or ref.dtype != torch.float32 or got.shape != ref.shape or got.dtype != ref.dtype:
        return None
    found = numerics.measure(ref, got.to(ref.device), "fp32", numerics.Workload())
    if found["rel_l2"] is None or found["max_rel_err"] is None or found.get("why_wrong"):
        return None
    return {"rel_l2": found["rel_l2"], "max_rel_err": found["max_rel_err"]}
