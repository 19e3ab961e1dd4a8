"""Output comparison: structure, shapes and dtypes here; floating values through numerics/classes.py.

A floating output's error is measured and classed by the arithmetic it is consistent with (exact, fp32,
tf32 for fp32 runs; exact, fp16 or bf16 for those runs; otherwise wrong), with bounds derived from
rounding-error analysis (docs/numerics.md). The contract decides which classes pass:
  tf32 (default)  exact, fp32 or tf32            fp32  exact or fp32
  kernelbench     torch.allclose(sol, ref, atol=1e-2, rtol=1e-2), upstream KernelBench's rule, plus a
                  guard that fails zero, constant and partial outputs (no element off by half of
                  max(RMS, |ref|)), which allclose alone accepts on small-magnitude outputs
fp16 and bf16 runs pass exact or their own precision's class under tf32 and fp32. Integer and bool
outputs must match exactly; NaN/Inf must appear exactly where the reference has them (kernelbench:
allclose's own rule). A problem's TOLERANCE[precision] = {atol, rtol, rel_l2} raises the class bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from kerneljudge.core.types import CONTRACTS
from kerneljudge.numerics import contracts, error_classes
from kerneljudge.numerics import classes as numerics
from kerneljudge.numerics.bounds import Workload


@dataclass(frozen=True)
class Comparison:
    ok: bool
    reason: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """How outputs are compared: run precision, contract, the problem's override and its workload."""
    precision: str
    contract: str = "tf32"
    override: dict[str, float] | None = None
    workload: Workload = field(default_factory=Workload)


def tolerance(precision: str, overrides: dict[str, Any] | None = None, contract: str = "tf32",
              reduction_length: int | None = None, matmul_stages: int | None = None,
              op_stages: int | None = None, workload: Workload | None = None) -> Rule:
    """The comparison rule; `overrides` is a problem's TOLERANCE dict (per precision: atol, rtol, rel_l2).
    `workload` (all the counts) wins over the three separate counts."""
    if precision not in contracts.CLASSES:
        raise ValueError(f"unknown precision {precision!r}; expected one of {', '.join(contracts.CLASSES)}")
    if contract not in CONTRACTS:
        raise ValueError(f"unknown numerics contract {contract!r}; expected one of {', '.join(CONTRACTS)}")
    extra = (overrides or {}).get(precision) if isinstance(overrides, dict) else None
    override = None
    if isinstance(extra, dict):
        override = {k: float(extra[k]) for k in ("atol", "rtol", "rel_l2") if k in extra}
    return Rule(precision, contract, override or None,
                workload or Workload(reduction_length, matmul_stages, op_stages))


def compare_outputs(ref: tuple[Any, list[torch.Tensor]], sol: tuple[Any, list[torch.Tensor]],
                    precision: str, overrides: dict[str, Any] | None = None, contract: str = "tf32",
                    reduction_length: int | None = None, matmul_stages: int | None = None,
                    op_stages: int | None = None, tf32_floors: list[Any] | None = None, *,
                    workload: Workload | dict[str, Any] | None = None,
                    fp64_floors: list[Any] | None = None) -> Comparison:
    """Compare (structure, tensors) pairs as produced by loading.flatten_output. `workload` carries the
    problem's counts (error_classes.WORKLOAD_KEYS; or give the first three separately); `tf32_floors` and
    `fp64_floors` hold, per output tensor, the reference's own TF32 and fp32 errors (worker/tf32_floor.py,
    worker/fp64_floor.py) or None.

    detail["numerics"] is the worst output's numerics dict (by class, then rel_l2), or the first failing
    output's, with "output" naming it; detail["rel_l2"] repeats its relative L2 error.
    """
    ref_struct, ref_tensors = ref
    sol_struct, sol_tensors = sol
    if _shape_of(ref_struct) != _shape_of(sol_struct):
        return Comparison(False, "output structure differs from the reference "
                          f"({_describe(ref_struct)} expected, got {_describe(sol_struct)})", {})
    value_issue = _compare_values(ref_struct, sol_struct)
    if value_issue:
        return Comparison(False, value_issue, {})
    if isinstance(workload, dict):
        workload = Workload.of(workload)
    rule = tolerance(precision, overrides, contract, reduction_length, matmul_stages, op_stages, workload)
    worst: dict[str, Any] | None = None
    for i, (r, s) in enumerate(zip(ref_tensors, sol_tensors)):
        result = compare_tensor(r, s, rule, _nth(tf32_floors, i), _nth(fp64_floors, i))
        found = result.detail.get("numerics")
        if found is not None:
            found["output"] = i
        if not result.ok:
            return Comparison(False, result.reason if len(ref_tensors) == 1 else f"output {i}: {result.reason}",
                              result.detail)
        worst = error_classes.worse(worst, found)
    if worst is None:
        return Comparison(True, "matches the reference (no tensor outputs)", {})
    _, reason = contracts.decide(worst, precision, contract)
    return Comparison(True, reason, {"rel_l2": worst["rel_l2"], "numerics": worst})


def _nth(per_output: list[Any] | None, i: int) -> Any:
    return per_output[i] if per_output and i < len(per_output) else None


def compare_tensor(ref: torch.Tensor, sol: torch.Tensor, rule: Rule,
                   tf32_floor: dict[str, float] | None = None,
                   fp64_floor: dict[str, float] | None = None) -> Comparison:
    if tuple(ref.shape) != tuple(sol.shape):
        return Comparison(False, f"output shape {tuple(sol.shape)} differs from the reference {tuple(ref.shape)}", {})
    if ref.dtype != sol.dtype:
        return Comparison(False, f"output dtype {_dt(sol.dtype)} differs from the reference {_dt(ref.dtype)}", {})
    if not (ref.is_floating_point() or ref.is_complex()):
        return _compare_exactly(ref, sol, rule.contract)
    if ref.is_complex():
        ref, sol = torch.view_as_real(ref), torch.view_as_real(sol)
    found = numerics.measure(ref, sol, rule.precision, rule.workload, rule.override, rule.contract, tf32_floor,
                             fp64_floor)
    ok, reason = contracts.decide(found, rule.precision, rule.contract)
    return Comparison(ok, reason, {"rel_l2": found["rel_l2"], "numerics": found})


def _compare_exactly(ref: torch.Tensor, sol: torch.Tensor, contract: str) -> Comparison:
    """Integer and bool outputs: every element equal, in every contract."""
    mismatched = int((ref != sol).sum()) if ref.numel() else 0
    found = {"max_abs_err": float((ref.long() - sol.long()).abs().max()) if mismatched else 0.0,
             "max_rel_err": None if mismatched else 0.0, "rel_l2": None if mismatched else 0.0,
             "frac_over_tol": mismatched / max(ref.numel(), 1), "class": "wrong" if mismatched else "exact",
             "contract": contract, "bounds": {}, "kernelbench": {"allclose": not mismatched, "guard": not mismatched}}
    if mismatched:
        return Comparison(False, f"{mismatched} of {ref.numel()} {_dt(ref.dtype)} elements differ "
                          "(integer outputs must match exactly)", {"mismatched": mismatched, "numerics": found})
    return Comparison(True, "exact", {"rel_l2": 0.0, "numerics": found})


def _dt(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _shape_of(node: Any) -> Any:
    if "seq" in node:
        return ("seq", tuple(_shape_of(n) for n in node["seq"]))
    return "tensor" if "tensor" in node else "value"


def _compare_values(ref: Any, sol: Any) -> str:
    if "seq" in ref:
        for r, s in zip(ref["seq"], sol["seq"]):
            issue = _compare_values(r, s)
            if issue:
                return issue
        return ""
    if "value" in ref:
        rv, sv = ref["value"], sol["value"]
        if isinstance(rv, float) and isinstance(sv, (int, float)) and not isinstance(sv, bool):
            if math.isclose(rv, sv, rel_tol=1e-4, abs_tol=1e-6):
                return ""
        if rv != sv:
            return f"output value {sv!r} differs from the reference {rv!r}"
    return ""


def _describe(node: Any) -> str:
    shape = _shape_of(node)
    return "a tensor" if shape == "tensor" else ("a value" if shape == "value" else f"a sequence of {len(node['seq'])}")
