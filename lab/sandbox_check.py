"""Check the box on this machine and measure what it costs (CPU or GPU).

    python lab/sandbox_check.py [--device cuda|cpu] [--reps 3] [--build]

Prints: what probe() found; the same workload (torch, a Triton kernel, a CUDA IPC export on a GPU, two
writes the box must refuse) plain and boxed, alternating, with wall times; on a GPU the two-stage box
(/dev/shm allowed until the worker has made torch's IPC counter file, then refused); the launcher's own
cost on a trivial module; with --build, a C++ (CPU) or CUDA (GPU) extension built by the trusted builder.
The workload runs as tests/sandbox_actions.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kerneljudge
from kerneljudge.sandbox import describe, launch, probe, spec

ROOT = Path(__file__).resolve().parent.parent
TESTS = str(ROOT / "tests")   # tests/sandbox_actions.py, the workload (not installed)
# the boxed processes import the same kerneljudge as this one (the installed package's parent folder)
PACKAGE_PARENT = str(Path(kerneljudge.__file__).resolve().parent.parent)

PLANTED = ["/dev/shm/kj-check-planted", os.path.expanduser("~/.cache/kj-check-planted")]


def _folders() -> tuple[str, str]:
    scratch = os.path.join(tempfile.mkdtemp(prefix="kj-check-"), "scratch")
    spec.prepare_scratch(scratch)
    return scratch, tempfile.mkdtemp(prefix="kj-out-check-", dir="/dev/shm")


def _env(scratch: str, device: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, TESTS]))
    if device == "cpu":
        env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    return spec.boxed_env(env, scratch)


def _run(command: list[str], env: dict[str, str], label: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    print(f"{label}: status {done.returncode}, {seconds:.2f} s, {lines[-1] if lines else done.stderr[-1500:]}",
          flush=True)
    return seconds


def _clean() -> None:
    for path in PLANTED:
        if os.path.exists(path):
            os.unlink(path)


def workload(device: str, reps: int) -> None:
    actions = [["triton", device], *([["ipc", 0]] if device == "cuda" else []), *(["write", p] for p in PLANTED)]
    text = json.dumps(actions)
    times: dict[str, list[float]] = {"plain": [], "boxed": []}
    for _ in range(reps):
        scratch, exchange = _folders()
        times["plain"].append(_run([sys.executable, "-m", "sandbox_actions", text], _env(scratch, device), "plain"))
        _clean()
        scratch, exchange = _folders()
        box = spec.solution_box(scratch, exchange, [TESTS], gpu=device == "cuda")
        times["boxed"].append(_run(launch.argv(box, "sandbox_actions", [text]), _env(scratch, device), "boxed"))
        _clean()
    print(f"workload median: plain {statistics.median(times['plain']):.2f} s, "
          f"boxed {statistics.median(times['boxed']):.2f} s", flush=True)


def two_stage() -> None:
    scratch, exchange = _folders()
    actions = [["cuda_init", 0], ["ipc", 0], ["write", PLANTED[0]], ["apply_pending", 0], ["ipc", 0],
               ["write", PLANTED[0] + "-after"], ["triton", "cuda"], ["write", PLANTED[1]]]
    first = spec.solution_box(scratch, exchange, [TESTS], shm=True)
    then = spec.solution_box(scratch, exchange, [TESTS])
    _run(launch.argv(first, "sandbox_actions", [json.dumps(actions)], then=then), _env(scratch, "cuda"), "two-stage")
    _clean()


def launch_cost(reps: int = 5) -> None:
    times: dict[str, list[float]] = {"plain": [], "boxed": []}
    trivial = json.dumps([["getpid", 0]])
    for _ in range(reps):
        scratch, exchange = _folders()
        times["plain"].append(_run([sys.executable, "-m", "sandbox_actions", trivial], _env(scratch, "cpu"), "plain"))
        box = spec.solution_box(scratch, exchange, [TESTS], gpu=False)
        times["boxed"].append(_run(launch.argv(box, "sandbox_actions", [trivial]), _env(scratch, "cpu"), "boxed"))
    print(f"launch median: plain {statistics.median(times['plain']) * 1e3:.0f} ms, "
          f"boxed {statistics.median(times['boxed']) * 1e3:.0f} ms", flush=True)


def build(device: str) -> None:
    from kerneljudge.judging.build.store import Builder
    from kerneljudge.worker.builds import import_extension

    import torch

    arch = "{}.{}".format(*torch.cuda.get_device_capability()) if device == "cuda" else ""
    builder = Builder(tempfile.mkdtemp(prefix="kj-check-builds-"), dict(os.environ, PYTHONPATH=PACKAGE_PARENT),
                      cuda_arch_list=arch)
    request = {"kind": "inline", "name": "kj_check_twice", "functions": {"twice": "twice"},
               "cpp_sources": ["torch::Tensor twice(torch::Tensor x);" if device == "cuda" else
                               "torch::Tensor twice(torch::Tensor x) { return 2 * x; }"]}
    if device == "cuda":
        request["cuda_sources"] = [
            "__global__ void k(const float* x, float* y, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }\n"
            "torch::Tensor twice(torch::Tensor x) { auto y = torch::empty_like(x); int n = x.numel();\n"
            "  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); return y; }"]
    result = builder.build(request, 900)
    print(f"build: ok={result.ok} {result.seconds:.1f} s {result.log[-1500:]}", flush=True)
    if result.ok:
        module = import_extension(result.name, builder.copy_into(result, tempfile.mkdtemp()), True)
        x = torch.arange(10, dtype=torch.float32, device=device)
        print(f"extension works: {torch.equal(module.twice(x), 2 * x)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--build", action="store_true")
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    report = probe()
    print(describe(report), json.dumps(report.to_dict()), flush=True)
    workload(device, args.reps)
    if device == "cuda":
        two_stage()
    launch_cost()
    if args.build:
        build(device)


if __name__ == "__main__":
    main()
