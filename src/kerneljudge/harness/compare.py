"""Output comparison with tolerances scaled to the output's magnitude.

A floating output passes when both hold, computed in float64:
  elementwise: |sol - ref| <= atol * scale + rtol * |ref|, with scale = RMS(ref)
  norm-wise:   ||sol - ref|| / ||ref|| <= rel_l2
The elementwise test admits honest differences in summation order; the norm-wise test catches a zero or
constant output (relative error ~1 wherever the true output varies) and hidden precision loss (TF32 or
bf16 inside an fp32 problem lands near 3e-4 and 3e-3). Integer and bool outputs must match exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

# Per run precision. See docs/judging.md for how these were chosen.
TOLERANCES: dict[str, dict[str, float]] = {
    "fp32": {"atol": 1e-3, "rtol": 1e-3, "rel_l2": 1e-4},
    "fp16": {"atol": 1e-2, "rtol": 1e-2, "rel_l2": 3e-3},
    "bf16": {"atol": 4e-2, "rtol": 4e-2, "rel_l2": 2e-2},
}
_CHUNK = 1 << 24


@dataclass(frozen=True)
class Comparison:
    ok: bool
    reason: str
    detail: dict[str, Any]


def tolerance(precision: str, overrides: dict[str, Any] | None = None) -> dict[str, float]:
    tol = dict(TOLERANCES[precision])
    extra = (overrides or {}).get(precision) or {}
    for key in ("atol", "rtol", "rel_l2"):
        if key in extra:
            tol[key] = float(extra[key])
    return tol


def compare_outputs(ref: tuple[Any, list[torch.Tensor]], sol: tuple[Any, list[torch.Tensor]],
                    precision: str, overrides: dict[str, Any] | None = None) -> Comparison:
    """Compare (structure, tensors) pairs as produced by loading.flatten_output."""
    ref_struct, ref_tensors = ref
    sol_struct, sol_tensors = sol
    if _shape_of(ref_struct) != _shape_of(sol_struct):
        return Comparison(False, "output structure differs from the reference "
                          f"({_describe(ref_struct)} expected, got {_describe(sol_struct)})", {})
    value_issue = _compare_values(ref_struct, sol_struct)
    if value_issue:
        return Comparison(False, value_issue, {})
    tol = tolerance(precision, overrides)
    worst: dict[str, Any] = {}
    for i, (r, s) in enumerate(zip(ref_tensors, sol_tensors)):
        result = compare_tensor(r, s, tol)
        result.detail["output"] = i
        if not result.ok:
            return result
        if result.detail.get("rel_l2", 0) >= worst.get("rel_l2", -1):
            worst = result.detail
    return Comparison(True, "matches the reference", worst)


def compare_tensor(ref: torch.Tensor, sol: torch.Tensor, tol: dict[str, float]) -> Comparison:
    if tuple(ref.shape) != tuple(sol.shape):
        return Comparison(False, f"output shape {tuple(sol.shape)} differs from the reference {tuple(ref.shape)}", {})
    if ref.dtype != sol.dtype:
        return Comparison(False, f"output dtype {_dt(sol.dtype)} differs from the reference {_dt(ref.dtype)}", {})
    if ref.numel() == 0:
        return Comparison(True, "empty", {"rel_l2": 0.0})
    if not (ref.is_floating_point() or ref.is_complex()):
        mismatched = int((ref != sol).sum())
        if mismatched:
            return Comparison(False, f"{mismatched} of {ref.numel()} {_dt(ref.dtype)} elements differ "
                              "(integer outputs must match exactly)", {"mismatched": mismatched})
        return Comparison(True, "exact", {"rel_l2": 0.0})
    r = ref.reshape(-1)
    s = sol.reshape(-1)
    sol_finite = _all_finite(s)
    ref_finite = _all_finite(r)
    if not sol_finite and ref_finite:
        bad = int((~torch.isfinite(s)).sum())
        return Comparison(False, f"output has {bad} NaN/Inf values where the reference is finite", {"nonfinite": bad})
    sq_ref = 0.0
    sq_diff = 0.0
    count = r.numel()
    for start in range(0, count, _CHUNK):
        rc = r[start:start + _CHUNK].double()
        sc = s[start:start + _CHUNK].double()
        finite = torch.isfinite(rc)
        if not bool(finite.all()):
            # non-finite reference values must be matched exactly (same inf, NaN where NaN)
            same = (rc == sc) | (torch.isnan(rc) & torch.isnan(sc))
            if not bool(same[~finite].all()):
                return Comparison(False, "output differs from the reference at its NaN/Inf positions", {})
            rc = torch.where(finite, rc, 0.0)
            sc = torch.where(finite, sc, 0.0)
        sq_ref += float((rc * rc).sum())
        sq_diff += float(((sc - rc) ** 2).sum())
    rms = math.sqrt(sq_ref / count)
    rel_l2 = math.sqrt(sq_diff) / math.sqrt(sq_ref) if sq_ref > 0 else (0.0 if sq_diff == 0 else math.inf)
    worst_excess = -math.inf
    worst: dict[str, Any] = {}
    for start in range(0, count, _CHUNK):
        rc = r[start:start + _CHUNK].double()
        sc = s[start:start + _CHUNK].double()
        finite = torch.isfinite(rc)
        rc = torch.where(finite, rc, 0.0)
        sc = torch.where(finite, sc, 0.0)
        err = (sc - rc).abs()
        allowed = tol["atol"] * rms + tol["rtol"] * rc.abs()
        excess = err - allowed
        idx = int(torch.argmax(excess))
        if float(excess[idx]) > worst_excess:
            worst_excess = float(excess[idx])
            worst = {"index": _unravel(start + idx, ref.shape), "ref": float(rc[idx]), "sol": float(sc[idx]),
                     "abs_err": float(err[idx]), "allowed": float(allowed[idx])}
    detail = {"rel_l2": rel_l2, "rms": rms, "max_abs_err_at": worst, **{f"tol_{k}": v for k, v in tol.items()}}
    if worst_excess > 0:
        return Comparison(False, f"output differs at {worst['index']}: got {worst['sol']:.6g}, expected "
                          f"{worst['ref']:.6g} (|err| {worst['abs_err']:.3g} > allowed {worst['allowed']:.3g})", detail)
    if rel_l2 > tol["rel_l2"]:
        return Comparison(False, f"relative L2 error {rel_l2:.3g} exceeds {tol['rel_l2']:.0e} "
                          "(precision loss or a constant/zero output)", detail)
    return Comparison(True, "matches the reference", detail)


def _all_finite(t: torch.Tensor) -> bool:
    return bool(torch.isfinite(t).all())


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    idx = []
    for dim in reversed(tuple(shape)):
        idx.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return list(reversed(idx))


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


def structure_ok(structure: Any, metas: Any, max_depth: int = 32) -> bool:
    """True when an output description sent by a solution's process is well formed (checked before use)."""
    if not isinstance(metas, list) or not all(_meta_ok(m) for m in metas):
        return False
    seen: list[int] = []

    def walk(node: Any, depth: int) -> bool:
        if depth > max_depth or not isinstance(node, dict) or len(node) != 1:
            return False
        if "tensor" in node:
            index = node["tensor"]
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(metas):
                return False
            seen.append(index)
            return True
        if "seq" in node:
            return isinstance(node["seq"], list) and all(walk(n, depth + 1) for n in node["seq"])
        if "value" in node:
            return node["value"] is None or isinstance(node["value"], (bool, int, float))
        return False

    return walk(structure, 0) and sorted(seen) == list(range(len(metas)))


def _meta_ok(meta: Any) -> bool:
    return (isinstance(meta, dict) and isinstance(meta.get("dtype"), str) and isinstance(meta.get("shape"), list)
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in meta["shape"])
            and isinstance(meta.get("nbytes"), int) and meta["nbytes"] >= 0)
