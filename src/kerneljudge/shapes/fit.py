"""A preset that fits a device's memory, for a problem whose judgement cannot fit at its own sizes (issue 31, item 7).

Upstream KernelBench's level 1 ReLU, Softmax and HingeLoss run out of memory on a 24 GB card at their sizes.
Such a problem is judged at a derived preset instead, found as the CPU small preset is (derive.py): the size
largest relative to its floor is halved, probed, and halved again, until the judgement's estimated need is
within the budget; where the reference rejects one size moving alone, every size is halved together
(upstream's HingeLoss broadcasts its labels of `batch_size` against rows of `input_shape`: the two must stay
equal). Halving keeps the base size's alignment (alignment.aligned_half: a power of two stays one, other
sizes keep their power-of-two factor up to 128) and the relations between sizes (equal sizes move together,
divisors and computed constants hold), so a kernel that relies on the benchmark shape's alignment still works
at the fitted preset, and the held-out shapes derived from it keep that alignment too.

    found = fit_overrides(derivation, base_result, budget, need, probe, notes)   # (record, result) or None

`need` turns a probe result into a judgement's bytes (the judge's own estimate, judging/shape_derivation.py);
`probe` runs the reference at some overrides (pure here: both are given).
"""

from __future__ import annotations

from typing import Any, Callable

from kerneljudge.shapes import derive
from kerneljudge.shapes.far_below import show

Probe = Callable[..., dict[str, Any]]          # probe(overrides, flops=..., activations=...) -> result
Need = Callable[[dict[str, Any]], int | None]  # a probe result -> a judgement's device bytes (None: unknown)

MAX_FIT_ROUNDS = 40       # probes spent searching the fitted preset (each halves one size: 2^40 is plenty)


def fit_overrides(d: derive.Derivation, base: dict[str, Any], budget: int, need: Need, probe: Probe,
                  notes: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The fitted preset when the base shape's need is over `budget`: ({"overrides", "need_bytes",
    "budget_bytes", "base_need_bytes"}, its probe result). A halving the reference rejects is undone and that
    size left alone. When no shape fits, the smallest the reference accepts (its need over the budget: the
    note says so). None when the base fits, its need is unknown, or no smaller shape is accepted."""
    base_need = need(base)
    if base_need is None or base_need <= budget:
        return None

    def measure(values: dict[derive.Group, int]) -> tuple[dict[str, Any], dict[str, Any], int] | None:
        overrides = d.overrides(values)
        result = probe(overrides, flops=False, activations=True) if overrides is not None else {"ok": False}
        found = need(result) if result["ok"] else None
        return None if found is None else (overrides, result, found)   # None: rejected, or not measurable

    current: dict[derive.Group, int] = {}
    frozen: set[derive.Group] = set()
    best: tuple[dict[str, Any], dict[str, Any], int] | None = None
    for _ in range(MAX_FIT_ROUNDS):
        new, moved = d.halve(current, frozen, 1, keep_alignment=True)
        if not moved:
            break
        measured = measure(new)
        if measured is None and len(d.groups) > 1:   # perhaps the sizes must move together
            new = d.halve_all(current, keep_alignment=True)
            measured = measure(new) if new != current else None
        if measured is None:   # that size stays where it was
            frozen |= set(moved)
            continue
        current, best = new, measured
        if measured[2] <= budget:
            break
    if best is None:
        notes.append(f"fitted: the default shape needs {_gib(base_need)}, over the {_gib(budget)} a judgement may "
                     f"have on this device, and the reference accepts no smaller shape; judged at the default")
        return None
    overrides, result, found = best
    over = "" if found <= budget else " (still over: the smallest shape the reference accepts)"
    notes.append(f"fitted {show(overrides)}: needs {_gib(found)} of the {_gib(budget)} a judgement may have on this "
                 f"device{over}; the default shape needs {_gib(base_need)}")
    record = {"overrides": overrides, "need_bytes": found, "budget_bytes": budget, "base_need_bytes": base_need}
    return record, result


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.3g} GiB"
