"""The device memory one judgement may need, which a problem's preset is fitted to (kerneljudge.shapes.fit).

Upstream's users on 24 GB cards ran out of memory on level 1 ReLU, Softmax and HingeLoss at their own sizes;
`--device-memory SIZE` sets the budget, and a problem whose judgement needs more is judged at a fitted preset
instead (verdict flag `preset_fitted`); without it, the card's memory does, for a problem whose reference has run
out of memory with the card to itself.
"""

from __future__ import annotations

from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging.device.slots import device_memory_total
from kerneljudge.judging.device.turns import judgement_memory_budget
from kerneljudge.judging.shape_derivation import judgement_need
from kerneljudge.shapes.plan import ShapePlan


def judgement_budget(options: JudgeOptions, device: str, gpu: str = "0", card: bool = False) -> int | None:
    """Bytes one judgement may need: judgement_memory_budget of --device-memory where given; with `card`, else of
    the memory of GPU `gpu` (nvidia-smi, no CUDA context here); else None (no fitting).

    Without --device-memory a problem is fitted only once its reference has failed for want of memory with the
    card to itself (judging/evaluate.py): the estimate a plan is fitted against counts fourteen inputs' worth, and
    upstream's ReLU (84 GiB by it) runs at its own size on an 80 GB H100, so fitting every problem the estimate
    puts over the card would judge dozens of them at sizes KernelBench does not."""
    total = options.device_memory or (device_memory_total(gpu) if card and device == "cuda" else 0)
    return judgement_memory_budget(total) if total else None


def first_gpu(env: dict[str, str]) -> str:
    """The GPU a child environment makes visible first ("0" when it names none)."""
    visible = [d.strip() for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return visible[0] if visible else "0"


def planned_need(plan: ShapePlan, small: bool) -> int | None:
    """A judgement's device memory as the problem's shape plan measured it at the preset judged (the probe's
    inputs, parameters and outputs: shape_derivation.judgement_need, outputs standing in for the largest activation
    where the probe did not look for it); None where the plan measured nothing there. Admission falls back on it
    where the reference process has no figure for the problem (its preparation failed, or its process was closed
    meanwhile): on the H100 on 2026-12-07, judgements admitted at an even share of the card for want of a figure
    sat beside upstream's 6-8 GiB problems, and 15 of those ran out of memory and were judged again alone."""
    measured = plan.measured.get("small" if small else "fitted" if plan.fitted else "default")
    if not isinstance(measured, dict) or not measured.get("ok", True):
        return None
    outputs = [int(n) for n in measured.get("output_bytes") or [] if isinstance(n, (int, float))]
    return judgement_need({**measured, "activation_bytes": max([int(measured.get("activation_bytes") or 0), *outputs])})
