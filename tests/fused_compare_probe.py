"""The fused GPU compare (numerics/fused_compare.py) against numerics.measure's torch path, on outputs of
every kind. Prints one JSON line: how many cases ran and the differences found (none expected).

    TRITON_INTERPRET=1 python tests/fused_compare_probe.py      # CPU tensors, Triton's interpreter (no bf16)
    python tests/fused_compare_probe.py --device cuda          # on a GPU, bf16 too, larger outputs

tests/test_numerics.py runs the first (TRITON_INTERPRET must be set before Triton is imported).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import zlib

import torch

from kerneljudge.numerics import bounds
from kerneljudge.numerics import fused_compare, classes as numerics

CASES = ("close", "tf32_like", "far", "nan_and_inf", "zero_reference", "ties", "override")


def make(kind: str, dtype: torch.dtype, n: int) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    g = torch.Generator().manual_seed(zlib.crc32(f"{kind} {dtype}".encode()))
    r = torch.randn(n, dtype=torch.float64, generator=g)
    s = r + 1e-6 * torch.randn(n, dtype=torch.float64, generator=g)
    override = None
    if kind == "tf32_like":
        s = r + 1e-3 * r.abs() * torch.randn(n, dtype=torch.float64, generator=g)
    elif kind == "far":
        s = r + torch.randn(n, dtype=torch.float64, generator=g)
    elif kind == "nan_and_inf":
        r[10], s[10] = math.nan, math.nan          # agree
        r[20], s[20] = math.inf, 1.0               # disagree at a reference Inf
        s[30], s[40] = math.nan, -math.inf         # solution NaN/Inf where the reference is finite
        r[50], s[50] = -math.inf, -math.inf
    elif kind == "zero_reference":
        r, s = torch.zeros(n, dtype=torch.float64), torch.full((n,), 1e-3, dtype=torch.float64)
    elif kind == "ties":   # the same largest error at many positions, some in one lane of several tiles
        r[7::512] = 1.0
        s = r.clone()
        s[7::512] = 1.5
    elif kind == "override":
        s = r + 1e-2 * torch.randn(n, dtype=torch.float64, generator=g)
        override = {"atol": 1e-2, "rtol": 1e-2}
    r, s = r.to(dtype), s.to(dtype)
    s[100:200] = r[100:200]                        # some bitwise-equal stretches
    return r, s, override


def differences(torch_path: dict, fused: dict, where: str) -> list[str]:
    found = []
    for key in sorted(set(torch_path) | set(fused)):
        a, b = torch_path.get(key), fused.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found += differences(a, b, f"{where}.{key}")
        elif isinstance(a, float) and isinstance(b, float):
            # sums are added in another order: 1e-16 relative, which the scale carries into the bounds
            if not (math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))):
                found.append(f"{where}.{key}: {a!r} != {b!r}")
        elif a != b:
            found.append(f"{where}.{key}: {a!r} != {b!r}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="the fused GPU compare against the torch path")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--elements", type=int, default=None, help="per output (default 3000 on the CPU, 2^22 on cuda)")
    args = parser.parse_args()
    n = args.elements or (3000 if args.device == "cpu" else 1 << 22)
    dtypes = [torch.float32, torch.float64, torch.float16]   # numpy, under the interpreter, has no bfloat16
    if args.device == "cuda":
        dtypes.append(torch.bfloat16)
    found, ran = [], 0
    for dtype in dtypes:
        for kind in CASES:
            r, s, override = (t.to(args.device) if isinstance(t, torch.Tensor) else t for t in make(kind, dtype, n))
            for contract in ("tf32", "kernelbench"):
                torch_path = _measure(r, s, override, contract, fused=False)
                fused = _measure(r, s, override, contract, fused=True)
                found += differences(torch_path, fused, f"{dtype}/{kind}/{contract}")
                ran += 1
    broken = list(fused_compare._broken)   # the kernels failed and the torch passes stood in: nothing was compared
    print(json.dumps({"device": args.device, "elements": n, "ran": ran, "differences": found[:20], "broken": broken}))
    return 1 if found or broken else 0


def _measure(r: torch.Tensor, s: torch.Tensor, override: dict | None, contract: str, fused: bool) -> dict:
    workload = bounds.Workload(64, 1, 1)
    original, chunk = fused_compare.usable, numerics._CHUNK
    if fused:
        if r.device.type == "cpu":
            fused_compare.usable = lambda r, s: True      # CPU tensors, through the interpreter
        elif not fused_compare.usable(r, s):
            raise SystemExit("the fused compare is not usable here (Triton missing, or too few elements)")
    else:
        fused_compare.usable = lambda r, s: False
        numerics._CHUNK = max(1000, r.numel() // 7)    # several chunks on the torch path
    try:
        return numerics.measure(r, s, "fp32", workload, override, contract)
    finally:
        fused_compare.usable, numerics._CHUNK = original, chunk


if __name__ == "__main__":
    sys.exit(main())
