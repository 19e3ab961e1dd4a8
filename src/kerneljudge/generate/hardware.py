"""The optional hardware block of a prompt: its data from a GPU spec, and its text.

    hardware_from_spec(spec, sm_count=..., l2_bytes=..., **extra) -> dict    the block's data
    render_hardware(hardware) -> str                                         the block's text (hardware.md)
"""

from __future__ import annotations

from typing import Any, Mapping

from kerneljudge.generate.templates import render

# Facts the GpuSpec of judging/roofline.py does not carry, from NVIDIA's published H100/H200 (GH100) figures:
# 132 SMs on the SXM part, 50 MiB of L2, compute capability 9.0, up to 228 KiB shared memory per SM.
H200_EXTRA: dict[str, Any] = {
    "sm_count": 132,
    "l2_bytes": 50 * 1024 ** 2,
    "compute_capability": "9.0",
    "shared_memory_per_sm_bytes": 228 * 1024,
}

# Order and labels of the hardware block; other keys are listed after these as "key: value".
_HARDWARE_FIELDS = (
    ("name", "GPU"),
    ("compute_capability", "Compute capability"),
    ("sm_count", "Streaming multiprocessors (SMs)"),
    ("memory_bandwidth", "Memory bandwidth"),
    ("fp32_flops", "Peak FP32 (CUDA cores)"),
    ("tf32_flops", "Peak TF32 (tensor cores)"),
    ("bf16_flops", "Peak BF16 (tensor cores)"),
    ("fp16_flops", "Peak FP16 (tensor cores)"),
    ("l2_bytes", "L2 cache"),
    ("shared_memory_per_sm_bytes", "Shared memory per SM"),
    ("memory_bytes", "Device memory"),
)


def hardware_from_spec(spec: Any, *, sm_count: int | None = None, l2_bytes: int | None = None,
                       **extra: Any) -> dict[str, Any]:
    """Hardware-block data from a judging.roofline.GpuSpec (or any object with its fields) plus plain extras.

    GpuSpec carries name, memory_bandwidth (bytes/s) and peak FLOP/s; SM count, L2 size and the like come
    as arguments, e.g. hardware_from_spec(H200, **H200_EXTRA). None values are left out.
    """
    data: dict[str, Any] = {}
    for key in ("name", "memory_bandwidth", "fp32_flops", "tf32_flops", "bf16_flops", "fp16_flops"):
        value = getattr(spec, key, None)
        if value is not None:
            data[key] = value
    for key, value in (("sm_count", sm_count), ("l2_bytes", l2_bytes), *extra.items()):
        if value is not None:
            data[key] = value
    return data


def _si(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _binary(nbytes: float) -> str:
    for factor, suffix in ((1024 ** 3, "GiB"), (1024 ** 2, "MiB"), (1024, "KiB")):
        if nbytes >= factor:
            return f"{nbytes / factor:.4g} {suffix}"
    return f"{nbytes:.0f} bytes"


def _hardware_value(key: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key == "memory_bandwidth":
        return _si(value, "B/s")
    if key.endswith("_flops"):
        return _si(value, "FLOP/s")
    if key.endswith("_bytes"):
        return _binary(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def render_hardware(hardware: Mapping[str, Any]) -> str:
    """The hardware block for a dict from hardware_from_spec (unknown keys listed as they are)."""
    labels = dict(_HARDWARE_FIELDS)
    keys = [k for k, _ in _HARDWARE_FIELDS if hardware.get(k) is not None]
    keys += [k for k in hardware if k not in labels and hardware[k] is not None]
    facts = "\n".join(f"- {labels.get(k, k)}: {_hardware_value(k, hardware[k])}" for k in keys)
    return render("hardware.md", facts=facts)
