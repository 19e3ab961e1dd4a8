"""Which arithmetic an output's error is consistent with, and what each numerics contract accepts.

docs/numerics.md derives every bound here and uses the same names. For one floating output, over the
positions where the reference is finite (N of them):
  S            RMS of the reference (the output's scale); m_j = max(S, |ref_j|), element j's scale
  rel_l2       ||sol - ref|| / ||ref||
  max_rel_err  max_j |sol_j - ref_j| / m_j
A class c (fp32 or tf32 for fp32 runs; fp16 or bf16 for those runs) holds when
  max_rel_err <= B_c + min(lambda_elem * rho_c, W_c)   and   rel_l2 <= phi * (B_c + min(lambda_norm * rho_c, W_c))
where, for n rounding stages at unit roundoff u_c, T approximated transcendental functions (tf32 class only)
and K fp32 roundings along the output's longest chain (numerics/arithmetic.py counts them),
  rho_c = sqrt(2 n u_c^2 + T e_fast^2 + 2 K u32^2)   Higham & Mary's model: independent errors add in quadrature
  B_c   = 2 n u_c if c admits truncation (TF32 tensor cores read the top 10 mantissa bits), else 0
  W_c   = 2 W u32 + T e_fast, the deterministic worst case of the chain's roundings (W of them, both sides),
          where the chain has no operand-rounding stage (n = 0); else no cap
  lambda_elem = sqrt(2 ln(2 N / P_FAIL))                                   Hoeffding, union over N elements
  lambda_norm = sqrt(1 + 2 sqrt(x / N_eff) + 2 x / N_peak), x = ln(1/P_FAIL)    Hsu, Kakade & Zhang
  phi = sqrt(sum m_j^2 / sum ref_j^2), N_eff = (sum m_j^2)^2 / sum m_j^4, N_peak = sum m_j^2 / max m_j^2
Reduced precision enters the tf32 class only where it can: the n = D matmul-like stages and the T
transcendental functions; a chain with neither has tf32 bounds equal to its fp32 bounds.
Two floors, both measured by the trusted reference process on the reference itself, raise bounds (never lower
them): the tf32 bounds are never below FLOOR_MARGIN times the error of the reference's own forward with TF32-
truncated matmul operands and tanh-form GELU (worker/tf32_floor.py), where the computation amplifies operand
rounding (softmax over large logits, a top-k that flips on a near-tie); and the bounds of every class of an fp32
run are never below FP64_FLOOR_MARGIN times the reference's own fp32 error against its float64 forward
(worker/fp64_floor.py), where cancellation amplifies fp32 rounding beyond the chain's count.
No solution code runs here: it compares tensors the reference process holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from kerneljudge.numerics import fused_compare
from kerneljudge.numerics.error_classes import WORKLOAD_KEYS, or_inf, reduced, worse  # noqa: F401  (re-exported)
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "tf32": 2.0 ** -11, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8}
# e_fast: relative error of the approximate transcendental functions real fp32 kernels use: tanh.approx.f32's
# is 2^-10.987 (PTX ISA), the loosest of them; __expf's 2 + 1.17|x| ulp and ex2.approx's 2 ulp are far inside.
# The tanh form of GELU differs from the erf form by up to 4.7e-4 (at x = -2.70), 1.8e-4 |x| at most: relative
# to a small output element that is more, which the tf32 floor measures on the reference (it runs tanh GELU).
FAST_TRANSCENDENTAL = 2.0 ** -11
P_FAIL = 1e-6                 # chance that honest arithmetic of a class fails its bound, per comparison
GROSS = 0.5                   # kernelbench guard: no element off by half of max(S, |ref_j|)
KERNELBENCH = {"atol": 1e-2, "rtol": 1e-2}
CLASSES = {"fp32": ("exact", "fp32", "tf32", "wrong"), "fp16": ("exact", "fp16", "wrong"),
           "bf16": ("exact", "bf16", "wrong")}
ACCEPTS = {"tf32": ("exact", "fp32", "tf32"), "fp32": ("exact", "fp32")}
_CHUNK = 1 << 24
# tf32 bounds >= FLOOR_MARGIN x the reference's own error with TF32-truncated operands (worker/tf32_floor.py):
# another input and another rounding pattern move elementwise maxima; 2 keeps bf16 operands (about 3x the
# truncation error on a matmul: 2.4e-3 against 7.7e-4 relative L2) outside the tf32 class.
FLOOR_MARGIN = 2.0
# fp32 and tf32 bounds >= FP64_FLOOR_MARGIN x the reference's own fp32 error against its float64 forward
# (worker/fp64_floor.py): another honest summation order errs by about as much again, in another pattern.
FP64_FLOOR_MARGIN = 4.0


@dataclass(frozen=True)
class Workload:
    """What the bounds need to know about the problem (numerics/arithmetic.py counts it); None = unknown, which
    is taken at its loosest: one matmul stage, one transcendental function, no worst-case cap."""
    reduction_length: int | None = None       # K: variance proxy of the fp32 roundings along the longest chain
    matmul_stages: int | None = None          # D: matmul-like ops along it (operands rounded by TF32)
    op_stages: int | None = None              # E: ops along it that round their result
    worst_case_roundings: int | None = None   # W: their largest error, in u32 (one computation)
    transcendental_stages: int | None = None  # T: transcendental functions along it (fast approximations)

    @classmethod
    def of(cls, counts: dict[str, Any] | None) -> "Workload":
        """From a dict carrying WORKLOAD_KEYS (a verdict's or a request's); missing keys are unknown."""
        counts = counts or {}
        return cls(**{k: counts.get(k) for k in WORKLOAD_KEYS})

    def counts(self) -> dict[str, int | None]:
        return {k: getattr(self, k) for k in WORKLOAD_KEYS}

    def k(self) -> int:
        return max(1, int(self.reduction_length or 1))

    def stages(self, precision: str) -> int:
        """Rounding stages at the class's precision: matmul operands in an fp32 run (none on a chain without a
        matmul-like op), every op in fp16/bf16."""
        if precision == "fp32":
            return 1 if self.matmul_stages is None else max(0, int(self.matmul_stages))
        return max(1, int(self.op_stages or self.matmul_stages or 1))

    def approximations(self) -> int:
        return 1 if self.transcendental_stages is None else max(0, int(self.transcendental_stages))

    def worst(self) -> int | None:
        return None if self.worst_case_roundings is None else max(1, int(self.worst_case_roundings))


@dataclass(frozen=True)
class ClassBound:
    cls: str
    unit_roundoff: float     # u_c of the class's rounding stages (0 for fp32: no operand rounding)
    truncation: bool         # B_c counted (rounding toward zero allowed)
    stages: int              # n
    reduction_length: int    # K
    approximations: int = 0  # T: transcendental functions that may be approximated (tf32 class)
    worst: int | None = None  # W; None: unknown, no cap

    @property
    def rho(self) -> float:
        u32 = UNIT_ROUNDOFF["fp32"]
        return math.sqrt(2 * self.stages * self.unit_roundoff ** 2 + self.approximations * FAST_TRANSCENDENTAL ** 2
                         + 2 * self.reduction_length * u32 ** 2)

    @property
    def bias(self) -> float:
        return 2 * self.stages * self.unit_roundoff if self.truncation else 0.0

    @property
    def cap(self) -> float:
        """The deterministic worst case, where the chain has no operand-rounding stage (else infinite)."""
        if self.worst is None or (self.stages and self.unit_roundoff):
            return math.inf
        return 2 * self.worst * UNIT_ROUNDOFF["fp32"] + self.approximations * FAST_TRANSCENDENTAL

    def limit(self, lam: float) -> float:
        """B_c + min(lam * rho_c, W_c): the bound before the output's floor factor phi."""
        return self.bias + min(lam * self.rho, self.cap)


def class_bounds(precision: str, workload: Workload) -> list[ClassBound]:
    """The classes other than exact and wrong, tightest first."""
    k, worst = workload.k(), workload.worst()
    if precision == "fp32":
        return [ClassBound("fp32", 0.0, False, 0, k, 0, worst),
                ClassBound("tf32", UNIT_ROUNDOFF["tf32"], True, workload.stages("fp32"), k,
                           workload.approximations(), worst)]
    return [ClassBound(precision, UNIT_ROUNDOFF[precision], False, workload.stages(precision), k)]


def lambda_elem(n: int) -> float:
    return math.sqrt(2 * math.log(2 * max(n, 1) / P_FAIL))


def lambda_norm(n_eff: float, n_peak: float) -> float:
    x = math.log(1 / P_FAIL)
    return math.sqrt(1 + 2 * math.sqrt(x / max(n_eff, 1.0)) + 2 * x / max(n_peak, 1.0))


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
    floors = _floors(precision, tf32_floor, fp64_floor)
    elem_limits = {b.cls: b.limit(lam_e) for b in classes}
    for floor in floors:
        floor.raise_limits(elem_limits, "max_rel_err")
    contract_limit = GROSS if contract == "kernelbench" else elem_limits[_loosest_accepted(precision, contract)]
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


@dataclass
class Floor:
    """A measured error of the reference itself that raises some classes' bounds to `margin` times it."""
    name: str                  # its key in the verdict's numerics.basis
    figures: dict[str, float]  # rel_l2, max_rel_err
    margin: float
    classes: tuple[str, ...]   # the classes whose bounds it raises
    raised: list[str] = field(default_factory=list)

    def raise_limits(self, limits: dict[str, float], metric: str) -> None:
        floor = self.margin * self.figures[metric]
        for cls in self.classes:
            if cls in limits and floor > limits[cls]:
                limits[cls] = floor
                self.raised.append(f"{cls}.{metric}")

    def describe(self) -> dict[str, Any]:
        return {**self.figures, "margin": self.margin, "raised": list(self.raised)}


def _floors(precision: str, tf32_floor: Any, fp64_floor: Any) -> list[Floor]:
    """The usable floors of an fp32 run (the other precisions have no tf32 class and keep their own rule)."""
    if precision != "fp32":
        return []
    found = []
    tf32 = _usable_floor(tf32_floor)
    if tf32:
        found.append(Floor("tf32_floor", tf32, FLOOR_MARGIN, ("tf32",)))
    fp64 = _usable_floor(fp64_floor)
    if fp64:
        found.append(Floor("fp64_floor", fp64, FP64_FLOOR_MARGIN, ("fp32", "tf32")))
    return found


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


def _usable_floor(floor: dict[str, Any] | None) -> dict[str, float] | None:
    """The floor's two numbers, if both are finite and non-negative (else the analysis alone decides)."""
    if not isinstance(floor, dict):
        return None
    try:
        found = {k: float(floor[k]) for k in ("rel_l2", "max_rel_err")}
    except (KeyError, TypeError, ValueError):
        return None
    return found if all(math.isfinite(v) and v >= 0 for v in found.values()) else None


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


def _loosest_accepted(precision: str, contract: str) -> str:
    if precision != "fp32":
        return precision
    return "tf32" if contract != "fp32" else "fp32"


def decide(numerics: dict[str, Any], precision: str, contract: str) -> tuple[bool, str]:
    """(ok, reason) for one output's numerics dict under a contract."""
    cls = numerics["class"]
    if contract == "kernelbench":
        kb = numerics["kernelbench"]
        if not kb["allclose"]:
            return False, (f"not torch.allclose(atol=1e-2, rtol=1e-2) (max abs error {numerics['max_abs_err']:.3g}; "
                           "the kernelbench contract)")
        if not kb["guard"]:
            return False, _guard_reason(numerics)
        return True, "within torch.allclose(atol=1e-2, rtol=1e-2) (the kernelbench contract)"
    accepted = ACCEPTS.get(contract, ACCEPTS["tf32"]) if precision == "fp32" else ("exact", precision)
    if cls == "exact":
        return True, "bitwise equal to the reference"
    if cls in accepted:
        return True, f"error consistent with {cls} arithmetic (rel L2 {or_inf(numerics['rel_l2']):.2g})"
    if cls == "wrong":
        return False, _wrong_reason(numerics, precision)
    return False, (f"error consistent with {cls} arithmetic (rel L2 {or_inf(numerics['rel_l2']):.2g}); the {contract} "
                   f"contract accepts only {' or '.join(accepted)}")


def _guard_reason(numerics: dict[str, Any]) -> str:
    if numerics.get("why_wrong"):
        return numerics["why_wrong"]
    return (f"an element is off by {or_inf(numerics['max_rel_err']):.3g} of max(RMS, |ref|) (a zero, constant or "
            f"partial output; the kernelbench contract's guard allows {GROSS})")


def _wrong_reason(numerics: dict[str, Any], precision: str) -> str:
    """Why an output is `wrong`; the first clause keeps the forms generate/feedback.py reads back."""
    if numerics.get("why_wrong"):
        return numerics["why_wrong"]
    loosest = "tf32" if precision == "fp32" else precision
    limit = numerics["bounds"][loosest]
    worst = numerics["worst_element"]
    if or_inf(numerics["max_rel_err"]) > limit["max_rel_err"]:
        allowed = limit["max_rel_err"] * worst["scale"]
        return (f"output differs at {worst['index']}: got {worst['sol']:.6g}, expected {worst['ref']:.6g} "
                f"(|err| {worst['abs_err']:.3g} > allowed {allowed:.3g}); error not consistent with {loosest} "
                "arithmetic")
    return (f"relative L2 error {or_inf(numerics['rel_l2']):.3g} exceeds {limit['rel_l2']:.2g} (the {loosest} bound: "
            "precision loss, or a zero, constant or partial output)")
