"""The bounds of each numerics class: from a problem's workload counts and an output's size to the largest error
that honest arithmetic of that class makes. Plain numbers (no torch): numerics/classes.py measures an output
against them.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kerneljudge.numerics.error_classes import WORKLOAD_KEYS

UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "tf32": 2.0 ** -11, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8}
# e_fast: relative error of the approximate transcendental functions real fp32 kernels use: tanh.approx.f32's
# is 2^-10.987 (PTX ISA), the loosest of them; __expf's 2 + 1.17|x| ulp and ex2.approx's 2 ulp are far inside.
# The tanh form of GELU differs from the erf form by up to 4.7e-4 (at x = -2.70), 1.8e-4 |x| at most: relative
# to a small output element that is more, which the tf32 floor measures on the reference (it runs tanh GELU).
FAST_TRANSCENDENTAL = 2.0 ** -11
P_FAIL = 1e-6                 # chance that honest arithmetic of a class fails its bound, per comparison
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


def reference_floors(precision: str, tf32_floor: Any, fp64_floor: Any) -> list[Floor]:
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


def _usable_floor(floor: dict[str, Any] | None) -> dict[str, float] | None:
    """The floor's two numbers, if both are finite and non-negative (else the analysis alone decides)."""
    if not isinstance(floor, dict):
        return None
    try:
        found = {k: float(floor[k]) for k in ("rel_l2", "max_rel_err")}
    except (KeyError, TypeError, ValueError):
        return None
    return found if all(math.isfinite(v) and v >= 0 for v in found.values()) else None
