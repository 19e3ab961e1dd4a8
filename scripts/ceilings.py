"""Measure a GPU's ceilings for the speed-of-light bound, and install them as the packaged H200 spec.

    python scripts/ceilings.py --out FILE.json [--gpu-index 0] [--quick]   # measure (needs CUDA; ~15 s)
    python scripts/ceilings.py --install FILE.json [--force]                # package it (no GPU needed)

Measured, with CUDA events after a warm-up, the median of repeated runs, on one GPU:
  memory_bandwidth  a large device-to-device copy (dst.copy_(src), 1 and 4 GiB): bytes read + written / s
  fp32_flops        square matmuls (8192 and 16384) in fp32 with TF32 off (what the judge runs)
  tf32_flops        the same with TF32 allowed
  bf16_flops, fp16_flops   the same in bf16 and fp16 (fp32 accumulation, torch's default)
The best size's median is the ceiling (2*n^3 FLOP per matmul). The file also records the GPU, driver,
torch, CUDA and Triton versions, the date, the command and every size's numbers. --install checks the file
and writes it to src/kerneljudge/data/suite/h200_ceilings.json, which kerneljudge.judging.roofline reads for
its H200 spec (fields not measured keep the datasheet figure; GpuSpec.source says which is which).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path


COPY_SIZES = (1 << 30, 4 << 30)
MATMUL_SIZES = (8192, 16384)
QUICK_COPY_SIZES = (256 << 20,)
QUICK_MATMUL_SIZES = (2048,)
PLAUSIBLE = (0.3, 1.1)   # a measured ceiling outside this share of the datasheet figure is refused without --force


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _time_ms(fn, warmup: int = 3, reps: int = 20, budget_s: float = 2.0) -> list[float]:
    """Per-call times (ms) by CUDA events; stops early once budget_s of timed calls has passed."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    started = time.perf_counter()
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
        if len(times) >= 5 and time.perf_counter() - started > budget_s:
            break
    return times


def measure_copy(sizes) -> list[dict]:
    import torch

    rows = []
    for nbytes in sizes:
        src = torch.randn(nbytes // 4, device="cuda")
        dst = torch.empty_like(src)
        times = _time_ms(lambda: dst.copy_(src))  # noqa: F821  (ruff misreads the `del` below; called here)
        med = _median(times)
        rows.append({"bytes": nbytes, "median_ms": med, "min_ms": min(times), "runs": len(times),
                     "bytes_per_s": 2 * nbytes / (med / 1e3)})
        del src, dst
        torch.cuda.empty_cache()
    return rows


def measure_matmul(kind: str, sizes) -> list[dict]:
    import torch

    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[kind]
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    rows = []
    try:
        for n in sizes:
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            c = torch.empty(n, n, device="cuda", dtype=dtype)
            times = _time_ms(lambda: torch.mm(a, b, out=c))  # noqa: F821  (as above: called before the `del`)
            med = _median(times)
            rows.append({"n": n, "median_ms": med, "min_ms": min(times), "runs": len(times),
                         "flops_per_s": 2 * n ** 3 / (med / 1e3)})
            del a, b, c
            torch.cuda.empty_cache()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    return rows


def _driver() -> str | None:
    try:
        with open("/proc/driver/nvidia/version") as f:
            found = re.search(r"\s(\d+\.\d+(?:\.\d+)?)\s", f.readline())
        return found.group(1) if found else None
    except OSError:
        return None


def _nvidia_smi(index: int) -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "-i", str(index), "--query-gpu=name,driver_version,memory.total,"
                              "clocks.max.sm,clocks.max.mem,power.limit", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def measure(index: int, quick: bool, argv: list[str]) -> dict:
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("ceilings: no CUDA device; nothing to measure")
    torch.cuda.set_device(index)
    torch.set_grad_enabled(False)
    started = time.perf_counter()
    props = torch.cuda.get_device_properties(index)
    copy = measure_copy(QUICK_COPY_SIZES if quick else COPY_SIZES)
    matmul = {k: measure_matmul(k, QUICK_MATMUL_SIZES if quick else MATMUL_SIZES)
              for k in ("fp32", "tf32", "bf16", "fp16")}
    info = {"gpu": props.name, "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "driver": _driver(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "python": platform.python_version(), "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory, "capability": f"{props.major}.{props.minor}",
            "nvidia_smi": _nvidia_smi(index), "command": " ".join(["scripts/ceilings.py", *argv])}
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception:
        pass
    info["memory_bandwidth"] = max(r["bytes_per_s"] for r in copy)
    for kind, rows in matmul.items():
        info[f"{kind}_flops"] = max(r["flops_per_s"] for r in rows)
    info["method"] = ("CUDA events, 3 warm-up calls, median of up to 20 calls per size; best size wins. "
                      "memory_bandwidth: dst.copy_(src), 2*bytes per copy. *_flops: torch.mm(a, b, out=c) on "
                      "randn n x n operands, 2*n^3 per call; fp32 with TF32 off, tf32 with it on.")
    info["details"] = {"copy": copy, "matmul": matmul}
    info["quick"] = quick
    info["seconds"] = round(time.perf_counter() - started, 1)
    return info


def install(path: str, force: bool) -> int:
    from kerneljudge.judging import roofline

    try:
        data = roofline.read_ceilings(path)
    except roofline.CeilingsError as exc:
        print(f"ceilings: {exc}", file=sys.stderr)
        return 3
    if "h200" not in data["gpu"].lower() and not force:
        print(f"ceilings: {path} was measured on {data['gpu']}, not an H200 (use --force to install anyway)",
              file=sys.stderr)
        return 3
    if data.get("quick") and not force:
        print(f"ceilings: {path} is a --quick measurement (small sizes); use --force to install it anyway",
              file=sys.stderr)
        return 3
    sheet = roofline.H200_DATASHEET
    odd = [f"{k} = {data[k]:.3g} is {data[k] / sheet[k]:.0%} of the datasheet's {sheet[k]:.3g}"
           for k in roofline.CEILING_FIELDS if data.get(k) is not None
           and not PLAUSIBLE[0] <= data[k] / roofline.H200_DATASHEET[k] <= PLAUSIBLE[1]]
    if odd and not force:
        print(f"ceilings: {path} does not look like an H200 measurement ({'; '.join(odd)}); use --force to install "
              "it anyway", file=sys.stderr)
        return 3
    missing = [k for k in roofline.CEILING_FIELDS if data.get(k) is None]
    target = roofline.H200_CEILINGS
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    print(f"ceilings: installed {path} as {target}" + (f" (not measured, datasheet kept: {', '.join(missing)})"
                                                       if missing else ""), file=sys.stderr)
    return 0


def _summary(info: dict) -> str:
    lines = [f"{info['gpu']} (driver {info.get('driver')}, torch {info.get('torch')}, CUDA {info.get('cuda')}), "
             f"{info['seconds']} s:",
             f"  memory bandwidth  {info['memory_bandwidth'] / 1e12:8.3f} TB/s (read + write)"]
    for kind in ("fp32", "tf32", "bf16", "fp16"):
        lines.append(f"  {kind:<16}  {info[f'{kind}_flops'] / 1e12:8.1f} TFLOP/s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the measurement here (JSON)")
    parser.add_argument("--install", metavar="FILE", help="package a measurement as the H200 ceilings")
    parser.add_argument("--gpu-index", type=int, default=0, help="which visible GPU to measure (default 0)")
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke test; not installable)")
    parser.add_argument("--force", action="store_true", help="with --install: accept another GPU or --quick")
    args = parser.parse_args(argv)
    if not args.out and not args.install:
        parser.error("give --out (measure) or --install FILE (package a measurement)")
    if args.out:
        info = measure(args.gpu_index, args.quick, argv)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(_summary(info), file=sys.stderr)
    if args.install:
        return install(args.install, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
