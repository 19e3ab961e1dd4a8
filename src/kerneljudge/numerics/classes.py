"""Which arithmetic one floating output's error is consistent with: two passes over the output (torch, chunk by
chunk, or numerics/fused_compare.py's kernels on a large GPU output) measure its errors, and its numerics dict
records them with the bounds of every class (numerics/bounds.py derives them) and the tightest class that holds.

Over the positions where the reference is finite: S is the reference's RMS, m_j = max(S, |ref_j|) element j's
scale, rel_l2 = ||sol - ref|| / ||ref|| and max_rel_err = max_j |sol_j - ref_j| / m_j (docs/numerics.md).
No solution code runs here: it compares tensors the reference process holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from kerneljudge.numerics import fused_compare
from kerneljudge.numerics.bounds import P_FAIL, Workload, class_bounds, lambda_elem, lambda_norm, reference_floors
from kerneljudge.numerics.contracts import GROSS, KERNELBENCH, loosest_accepted

_CHUNK = 1 << 24


@dataclass
class FirstPass:
    """Pass one over a floating output, chunk by chunk in float64: scale, norms, exactness, NaN/Inf rules."""
    count: int = 0                   # positions where the reference is finite
    bitwise_equal: bool = True
    nonfinite_mismatch: int = 0      # positions where the reference is NaN/Inf and the solution differs
    sol_nonfinite: int = 0           # positions where the reference is finite and the solution is not
    ref_sq: float = 0.0
    diff_sq: float = 0.0
    max_abs_err: float = 0.0
    not_close: int = 0               # elements where torch.isclose(sol, ref, atol=1e-2, rtol=1e-2) fails

    def add(self, r: torch.Tensor, s: torch.Tensor) -> None:
        if self.bitwise_equal and not _bitwise_equal(r, s):
            self.bitwise_equal = False
        self.not_close += r.numel() - int(torch.isclose(s, r, **KERNELBENCH).sum())
        finite, sol_finite = _finite(r), _finite(s)   # on the narrow type: the same mask as the float64 copy's
        rd, sd = r.double(), s.double()
        if not bool(finite.all()):
            same = (rd == sd) | (torch.isnan(rd) & torch.isnan(sd))
            self.nonfinite_mismatch += int((~same & ~finite).sum())
            rd, sd, sol_finite = rd[finite], sd[finite], sol_finite[finite]
        bad = sol_finite.numel() - int(sol_finite.sum())
        self.sol_nonfinite += bad
        err = ((torch.where(sol_finite, sd, 0.0) if bad or not SKIP_NO_OP_MASKS else sd) - rd).abs()
        self.count += int(rd.numel())
        self.ref_sq += float((rd * rd).sum())
        self.diff_sq += float((err * err).sum())
        if rd.numel():
            self.max_abs_err = max(self.max_abs_err, float(err.max()))

    @property
    def scale(self) -> float:
        return math.sqrt(self.ref_sq / self.count) if self.count else 0.0

    @property
    def rel_l2(self) -> float:
        if self.ref_sq > 0:
            return math.sqrt(self.diff_sq / self.ref_sq)
        return 0.0 if self.diff_sq == 0 else math.inf


@dataclass
class SecondPass:
    """Pass two (needs S): elementwise errors against m_j = max(S, |ref_j|), and the sums of m_j that
    set phi, N_eff and N_peak. NaN/Inf positions are left to the NaN/Inf rules."""
    scale: float
    limit: float                     # the contract's elementwise bound, for frac_over_tol
    override: dict[str, float] | None
    max_rel: float = 0.0
    over: int = 0
    override_ok: bool = True         # |err| <= atol * S + rtol * |ref| everywhere (a problem's TOLERANCE)
    m2: float = 0.0
    m4: float = 0.0
    m_peak: float = 0.0
    worst: dict[str, Any] = field(default_factory=dict)

    def add(self, start: int, r: torch.Tensor, s: torch.Tensor) -> None:
        finite = _finite(r)
        both = finite & _finite(s)
        rd, sd = r.double(), s.double()
        plain = SKIP_NO_OP_MASKS and bool(both.all())   # every position finite on both sides
        if not plain:
            rd, sd = torch.where(both, rd, 0.0), torch.where(both, sd, 0.0)
        err = (sd - rd).abs()
        if plain and self.scale > 0:  # then m >= scale > 0 everywhere: the masks below would change nothing
            m = torch.clamp(rd.abs(), min=self.scale)
            rel = err / m
        else:
            m = torch.where(finite, torch.clamp(rd.abs(), min=self.scale), 0.0)
            rel = torch.where(m > 0, err / m, torch.where(err > 0, math.inf, 0.0))
        at = int(torch.argmax(rel))
        if float(rel[at]) > self.max_rel or not self.worst:
            self.max_rel = float(rel[at])
            self.worst = {"flat_index": start + at, "ref": float(rd[at]), "sol": float(sd[at]),
                          "abs_err": float(err[at]), "scale": float(m[at])}
        self.over += int((rel > self.limit).sum())
        m2 = m * m
        self.m2 += float(m2.sum())
        self.m4 += float((m2 * m2).sum())
        self.m_peak = max(self.m_peak, float(m2.max()))
        if self.override is not None and self.override_ok:
            allowed = self.override.get("atol", 0.0) * self.scale + self.override.get("rtol", 0.0) * rd.abs()
            self.override_ok = bool((err <= allowed).all())


# Skip the masking passes where every position is finite (they would change no value). Off: every chunk takes
# the general path, which tests/test_numerics.py uses to show both give the same result, bit for bit.
SKIP_NO_OP_MASKS = True


def _finite(t: torch.Tensor) -> torch.Tensor:
    """torch.isfinite(t) in two elementwise passes instead of its four (==, abs, !=, *): x - x is exactly 0
    for every finite x and NaN for NaN and both infinities. Compares spend most of their time in such passes."""
    return (t - t) == 0


def _bitwise_equal(r: torch.Tensor, s: torch.Tensor) -> bool:
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}.get(r.element_size())
    if ints is None:
        return bool(torch.equal(r, s))
    return bool(torch.equal(r.contiguous().view(ints), s.contiguous().view(ints)))


def measure(ref: torch.Tensor, sol: torch.Tensor, precision: str, workload: Workload,
            override: dict[str, float] | None = None, contract: str = "tf32",
            tf32_floor: dict[str, float] | None = None, fp64_floor: dict[str, float] | None = None) -> dict[str, Any]:
    """The numerics dict of one floating output (same shape and dtype as the reference). `tf32_floor` and
    `fp64_floor` ({"rel_l2", "max_rel_err"} of the reference's own TF32 and fp32 errors on this output, measured
    by the reference process) raise the bounds of an fp32 run: the tf32 class's, and every class's."""
    r, s = ref.reshape(-1), sol.reshape(-1)
    first = _first_pass(r, s)
    classes = class_bounds(precision, workload)
    lam_e = lambda_elem(first.count)
    floors = reference_floors(precision, tf32_floor, fp64_floor)
    elem_limits = {b.cls: b.limit(lam_e) for b in classes}
    for floor in floors:
        floor.raise_limits(elem_limits, "max_rel_err")
    contract_limit = GROSS if contract == "kernelbench" else elem_limits[loosest_accepted(precision, contract)]
    second = _second_pass(r, s, first.scale, contract_limit, override)
    phi = math.sqrt(second.m2 / first.ref_sq) if first.ref_sq > 0 else 1.0
    n_eff = second.m2 ** 2 / second.m4 if second.m4 > 0 else 1.0
    n_peak = second.m2 / second.m_peak if second.m_peak > 0 else 1.0
    lam_n = lambda_norm(n_eff, n_peak)
    norm_limits = {b.cls: phi * b.limit(lam_n) for b in classes}
    for floor in floors:
        floor.raise_limits(norm_limits, "rel_l2")
    bounds = {b.cls: {"rel_l2": norm_limits[b.cls], "max_rel_err": elem_limits[b.cls]} for b in classes}
    n = max(first.count, 1)
    result: dict[str, Any] = {
        "max_abs_err": first.max_abs_err, "max_rel_err": second.max_rel, "rel_l2": first.rel_l2,
        "frac_over_tol": first.not_close / max(r.numel(), 1) if contract == "kernelbench" else second.over / n,
        "class": "wrong", "contract": contract, "bounds": bounds,
        "basis": {"scale": first.scale, "elements": first.count, "lambda_norm": lam_n, "lambda_elem": lam_e,
                  "floor_factor": phi, "p_fail": P_FAIL, "reduction_length": workload.k(),
                  "stages": workload.stages(precision), "transcendental_stages": workload.approximations(),
                  "worst_case_roundings": workload.worst(),
                  "capped": sorted(b.cls for b in classes if b.cap < max(lam_e, lam_n) * b.rho)},
        "kernelbench": {"allclose": first.not_close == 0, "guard": False},
        "worst_element": {**second.worst, "index": _unravel(second.worst.get("flat_index", 0), ref.shape)},
    }
    if override:
        result["basis"]["override"] = dict(override)
    for floor in floors:
        result["basis"][floor.name] = floor.describe()
    reason = _disqualified(first)
    if reason:
        result["why_wrong"] = reason
    elif first.bitwise_equal:
        result["class"] = "exact"
    else:
        result["class"] = _first_class(bounds, first.rel_l2, second.max_rel, override, second.override_ok)
    result["kernelbench"]["guard"] = not reason and second.max_rel <= GROSS
    for key in ("max_abs_err", "max_rel_err", "rel_l2"):   # JSON has no infinity: undefined is null
        if not math.isfinite(result[key]):
            result[key] = None
    return result


def _first_pass(r: torch.Tensor, s: torch.Tensor) -> FirstPass:
    if fused_compare.usable(r, s):   # a large output on the GPU: one Triton kernel (numerics/fused_compare.py)
        try:
            return FirstPass(**fused_compare.first_pass(r.contiguous(), s.contiguous(), **KERNELBENCH))
        except Exception as exc:  # never a verdict's concern: the torch passes give the same answer
            fused_compare.give_up(exc)
    first = FirstPass()
    for start in range(0, r.numel(), _CHUNK):
        first.add(r[start:start + _CHUNK], s[start:start + _CHUNK])
    return first


def _second_pass(r: torch.Tensor, s: torch.Tensor, scale: float, limit: float,
                 override: dict[str, float] | None) -> SecondPass:
    second = SecondPass(scale, limit, override)
    found = None
    if fused_compare.usable(r, s):
        try:
            found = fused_compare.second_pass(r.contiguous(), s.contiguous(), scale, limit, override)
        except Exception as exc:
            fused_compare.give_up(exc)
    if found is not None:
        if found["at"] >= 0:   # the worst element's fields, from the torch path on that one element
            at = found["at"]
            second.add(at, r[at:at + 1], s[at:at + 1])
        second.max_rel, second.over, second.override_ok = found["max_rel"], found["over"], found["override_ok"]
        second.m2, second.m4, second.m_peak = found["m2"], found["m4"], found["m_peak"]
        return second
    for start in range(0, r.numel(), _CHUNK):
        second.add(start, r[start:start + _CHUNK], s[start:start + _CHUNK])
    return second


def _first_class(bounds: dict[str, dict[str, float]], rel_l2: float, max_rel: float,
                 override: dict[str, float] | None, override_elem_ok: bool) -> str:
    """The tightest class whose bounds hold; a problem's override raises a bound, never lowers it."""
    override = override or {}
    for cls, limit in bounds.items():
        elem_ok = max_rel <= limit["max_rel_err"] or (override_elem_ok and ("atol" in override or "rtol" in override))
        norm_ok = rel_l2 <= max(limit["rel_l2"], override.get("rel_l2", 0.0))
        if elem_ok and norm_ok:
            return cls
    return "wrong"


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    index = []
    for dim in reversed(tuple(shape)):
        index.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return list(reversed(index))


def _disqualified(sums: FirstPass) -> str:
    if sums.nonfinite_mismatch:
        return "output differs from the reference at its NaN/Inf positions"
    if sums.sol_nonfinite:
        return f"output has {sums.sol_nonfinite} NaN/Inf values where the reference is finite"
    return ""
