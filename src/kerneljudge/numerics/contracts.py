"""What each numerics contract accepts: the classes of each precision, the kernelbench contract's tolerances and
guard, and the decision on one output's numerics dict with its reason (the reasons of a wrong output included).
Plain data (no torch); numerics/classes.py measures the dict this decides on.
"""

from __future__ import annotations

from typing import Any

from kerneljudge.numerics.error_classes import or_inf

GROSS = 0.5                   # kernelbench guard: no element off by half of max(S, |ref_j|)
KERNELBENCH = {"atol": 1e-2, "rtol": 1e-2}
CLASSES = {"fp32": ("exact", "fp32", "tf32", "wrong"), "fp16": ("exact", "fp16", "wrong"),
           "bf16": ("exact", "bf16", "wrong")}
ACCEPTS = {"tf32": ("exact", "fp32", "tf32"), "fp32": ("exact", "fp32")}


def loosest_accepted(precision: str, contract: str) -> str:
    """The loosest class (other than exact) the contract accepts at this precision; its bound is the contract's."""
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
