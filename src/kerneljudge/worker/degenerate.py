"""Can this reference tell a right answer from a wrong one? (threat B12 in docs/threats.md)

A problem whose reference output is rounding noise accepts a constant: the published Sakana AI CUDA Engineer
kernel for upstream level 2 problem 23 (Conv3d, GroupNorm, then the mean of the normalised tensor, which is zero
up to rounding) wrote a constant and was accepted. So before any solution output is compared, the reference
process decides from the reference alone whether the problem can judge at this size, under this contract:

  noise     its fp32 output is off its float64 forward by more than FP64_SHARE (relative L2): what an honest
            fp32 computation gives here is mostly rounding (worker/fp64_floor.py)
  tf32      under the tf32 contract, its own forward with TF32 operands moves it by more than TF32_SHARE: the
            tf32 class admits about that much error, so it admits nearly anything (worker/tf32_floor.py)
  constant  the reference's outputs for OTHER_INPUTS other inputs all pass as this input's answer under the
            contract, with every bound and floor in force: one answer fits every trial, so a solution that
            ignores its inputs would be accepted

Any of them makes the problem degenerate at that size: a problem-level outcome, never a verdict against the
solution. The kernelbench contract reproduces upstream's rule and is left alone. Pure: it compares tensors the
reference process holds and runs no code.
"""

from __future__ import annotations

from typing import Any, Callable

from kerneljudge.numerics import compare

FP64_SHARE = 1e-2     # largest relative L2 error of the reference's fp32 output against float64 it may have
OTHER_INPUTS = 4      # as many as the trials after the first (5 by default): one answer must fit them all
TF32_SHARE = 0.25     # largest relative L2 move of its own TF32 forward (the suite's largest on the H200: 0.038)
KIND = "degenerate_reference"


def check(contract: str, precision: str, output: Callable[[int], tuple[Any, list[Any]]], inputs: int,
          workload: dict[str, Any] | None, tolerance: dict[str, Any] | None, tf32_floors: list[Any],
          fp64_floors: list[Any]) -> dict[str, Any] | None:
    """None when the reference can judge; else {"kind", "reason", "figures"}. `output(i)` gives the reference's
    (structure, tensors) for input i of `inputs` (computed when asked: the first other input that does not fit
    ends the test); the floors are per output tensor (None where not had)."""
    if contract == "kernelbench":
        return None
    noise = _largest(fp64_floors)
    if precision == "fp32" and noise > FP64_SHARE:
        return _found(f"the reference's fp32 output is rounding noise: it is off its own float64 forward by "
                      f"{noise:.3g} in relative L2 (more than {FP64_SHARE:g})", fp64_rel_l2=noise)
    moved = _largest(tf32_floors)
    if precision == "fp32" and contract == "tf32" and moved > TF32_SHARE:
        return _found(f"the reference's own TF32 forward moves its output by {moved:.3g} in relative L2 (more than "
                      f"{TF32_SHARE:g}): the tf32 contract cannot tell a right answer from a wrong one here; "
                      "--numerics fp32 may", tf32_rel_l2=moved)
    others = range(1, min(inputs, OTHER_INPUTS + 1))
    errors = []
    for i in others:
        other = compare.compare_outputs(output(0), output(i), precision, tolerance, contract,
                                        tf32_floors=tf32_floors, fp64_floors=fp64_floors, workload=workload)
        if not other.ok:
            return None
        errors.append((other.detail.get("numerics") or {}).get("rel_l2"))
    if errors:
        return _found(f"the reference's outputs for {len(errors)} other inputs all pass as this input's answer "
                      f"(relative L2 errors {', '.join(f'{e:.2g}' for e in errors if e is not None)}): one answer "
                      "fits every trial, so a solution that ignores its inputs would be accepted",
                      other_inputs_rel_l2=errors)
    return None


def _largest(floors: list[Any]) -> float:
    values = [float(f["rel_l2"]) for f in floors or [] if isinstance(f, dict) and f.get("rel_l2") is not None]
    return max(values, default=0.0)


def _found(reason: str, **figures: Any) -> dict[str, Any]:
    return {"kind": KIND, "reason": reason, "figures": figures}
