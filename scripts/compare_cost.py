"""How long the reference process takes to compare one output (harness/numerics.measure), on this machine.

    python scripts/compare_cost.py [--device cuda] [--elements 335544320] [--repeats 5]

A fp32 output and a solution's output 1e-6 away from it (the common case: every value finite, every chunk
on the fast path); prints the median wall time of `measure` (on a GPU: through the fused Triton passes of
numerics/fused_compare.py, and through the torch passes they replace) and, for scale, of one float64 copy of
the output. The default size is a KernelBench-sized elementwise output (4096 x 81920, 1.25 GiB). On the CPU
the timing runs on one thread, as the judge's processes do.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from kerneljudge.numerics import bounds
from kerneljudge.numerics import fused_compare, classes as numerics


def timed(fn, device: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--elements", type=int, default=None,
                        help="output size (default: 4096 x 81920 on cuda, 2^24 on the CPU)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    n = args.elements or (4096 * 81920 if args.device == "cuda" else 1 << 24)
    generator = torch.Generator(device=args.device).manual_seed(0)
    ref = torch.randn(n, device=args.device, generator=generator)
    sol = ref + 1e-6 * torch.randn(n, device=args.device, generator=generator)
    workload = bounds.Workload(1, 0, 1)
    paths = {"torch passes": lambda r, s: False}
    if fused_compare.usable(ref, sol):
        paths = {"fused passes": fused_compare.usable, **paths}
    original = fused_compare.usable
    found = []
    for name, choice in paths.items():
        fused_compare.usable = choice
        try:
            numerics.measure(ref, sol, "fp32", workload)   # warm-up (kernels, allocator, Triton's compile)
            seconds = timed(lambda: numerics.measure(ref, sol, "fp32", workload), args.device, args.repeats)
        finally:
            fused_compare.usable = original
        found.append(f"measure through the {name} {seconds * 1e3:.1f} ms")
    if fused_compare._broken:
        found.append(f"(the fused passes failed and the torch passes stood in: {fused_compare._broken[0]})")
    copy = timed(lambda: ref.double(), args.device, args.repeats)
    print(f"{args.device}: {n} elements: {'; '.join(found)} (medians of {args.repeats}); "
          f"one float64 copy {copy * 1e3:.1f} ms")

if __name__ == "__main__":
    main()
