"""The reference's own TF32 error: the floor under the tf32 class's bounds (numerics/bounds.py).

The rounding-error analysis bounds how far TF32 operands can move an output when each stage passes errors on
at about their own size. Some computations amplify them: a softmax turns an absolute logit error into a
relative output error (large logits, long sequences), and a top-k router picks another expert when TF32
moves two logits past each other. On the H200 such problems rejected honest TF32 and fp16-operand variants
of their own reference (docs/evidence/2026-12-01-h200-numerics-calibration-before-floor.md). So the reference
process runs the reference forward again, once per model on each of the first FLOOR_SEEDS trials' inputs,
with every matmul-like operand truncated to TF32 (the coarsest TF32 a solution may use: what tensor cores do
with fp32 registers, Triton's tl.dot default; emulated, so it is not the rounding of any GPU library a
solution calls) and every exact GELU in its tanh form (the approximation whose error, relative to a small
output element, a fixed allowance cannot bound), and measures that output's error against the fp32 one.
A chain with neither a matmul-like op nor a GELU comes out bitwise equal: its floor is zero. The floor is the
largest of those errors; the tf32 bounds are never below bounds.FLOOR_MARGIN times it. A discrete decision
(a top-k route) flips only on some inputs, so more than one input is looked at.
Only trusted code runs here: the problem's reference Model in the reference process.
"""

from __future__ import annotations

from typing import Any

import torch

from kerneljudge.worker import loading
from kerneljudge.numerics import bounds
from kerneljudge.numerics import classes as numerics, reduced_precision


FLOOR_SEEDS = 2   # trials whose inputs the floor looks at


def measure(problem: Any, model: torch.nn.Module, seeds: list[int], device: str,
            expected: list[list[torch.Tensor]]) -> list[dict[str, float] | None]:
    """One floor per output tensor ({"rel_l2", "max_rel_err"}, or None where it cannot be had): the largest
    error, over the first FLOOR_SEEDS seeds, of the reference forward with TF32-truncated matmul operands
    against `expected[i]` (the fp32 outputs on seed i's inputs)."""
    pairs = list(zip(seeds, expected))[:FLOOR_SEEDS]
    if not pairs:
        return []
    floors: list[dict[str, float] | None] | None = None
    for seed, outputs in pairs:
        found = _one_input(problem, model, seed, device, outputs)
        floors = found if floors is None else [_larger(a, b) for a, b in zip(floors, found)]
    return floors or []


def _one_input(problem: Any, model: torch.nn.Module, seed: int, device: str,
               expected: list[torch.Tensor]) -> list[dict[str, float] | None]:
    try:
        inputs = loading.make_inputs(problem, seed, device, "fp32")
        with torch.no_grad(), reduced_precision.running_as("tf32_floor", device):
            _, tensors = loading.flatten_output(model(*inputs), device)
    except Exception:  # a forward the rounding mode cannot run: the analysis alone decides
        return [None] * len(expected)
    if len(tensors) != len(expected):
        return [None] * len(expected)
    return [_floor(r, t) for r, t in zip(expected, tensors)]


def _larger(a: dict[str, float] | None, b: dict[str, float] | None) -> dict[str, float] | None:
    """Per metric, the larger of two floors; a floor that could not be had on one input is not had."""
    if a is None or b is None:
        return None
    return {k: max(a[k], b[k]) for k in a}


def _floor(ref: torch.Tensor, got: torch.Tensor) -> dict[str, float] | None:
    if not ref.is_floating_point() or ref.dtype != torch.float32 or got.shape != ref.shape or got.dtype != ref.dtype:
        return None
    found = numerics.measure(ref, got.to(ref.device), "fp32", bounds.Workload())
    if found["rel_l2"] is None or found["max_rel_err"] is None or found.get("why_wrong"):
        return None
    return {"rel_l2": found["rel_l2"], "max_rel_err": found["max_rel_err"]}
