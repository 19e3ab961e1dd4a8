"""What a shape plan records of a probe result: its summary (ShapePlan.measured) and its budget line in the notes.

Used by the derivation (judging/shape_derivation.py); nothing here runs a probe.
"""

from __future__ import annotations

from typing import Any


def measured_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The parts of a probe result a plan keeps under `measured`."""
    keys = ("ok", "mode", "error", "input_bytes", "param_bytes", "output_bytes", "activation_bytes", "output_shapes",
            "flops", "cpu_seconds", "cpu_first_seconds")
    return {k: result[k] for k in keys if k in result}


def budget_text(result: dict[str, Any]) -> str:
    """A probe result's sizes, FLOPs and CPU time, as a note says them."""
    inputs = result.get("input_bytes") or [0]
    text = (f"largest input {mib(max(inputs))}, inputs + outputs "
            f"{mib(sum(inputs) + sum(result.get('output_bytes') or []))}, parameters "
            f"{mib(result.get('param_bytes') or 0)}, {(result.get('flops') or 0) / 1e6:.3g} MFLOP")
    if result.get("cpu_seconds") is not None:
        text += (f", CPU forward {result['cpu_seconds'] * 1e3:.3g} ms "
                 f"(first call {result['cpu_first_seconds'] * 1e3:.3g} ms)")
    return text


def mib(n: float) -> str:
    """A byte count in GiB, MiB or KiB, four significant digits."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n / 1024:.4g} KiB"
