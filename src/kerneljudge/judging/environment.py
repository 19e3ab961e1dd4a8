"""Where children run: device choice, cache folders, and the environment a child starts with."""

from __future__ import annotations

import functools
import glob
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

# Variables a child never inherits: the judge's own settings and anything that looks like a secret.
_DROP_PREFIXES = ("KERNELJUDGE_", "OPENAI", "ANTHROPIC", "HF_TOKEN", "AWS_", "GITHUB_TOKEN")


def resolve_device(requested: str) -> str:
    """"auto": cuda where torch can use a GPU here, else cpu. Decided without importing torch in this process
    (the orchestrator never runs a model; importing torch would add seconds to every cold `eval`)."""
    if requested != "auto":
        return requested
    return "cuda" if cuda_usable() else "cpu"


def cuda_usable() -> bool:
    """A torch build with CUDA, a GPU the driver lists (nvidia-smi), and CUDA_VISIBLE_DEVICES not hiding all.
    Asked once per process and CUDA_VISIBLE_DEVICES value (a pool asks for every job it is given)."""
    return _cuda_usable(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))


@functools.lru_cache(maxsize=None)
def _cuda_usable(visible: str) -> bool:
    if visible.strip() in ("", "-1"):
        return False
    spec = importlib.util.find_spec("torch")
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not any(glob.glob(os.path.join(folder, "lib", "libtorch_cuda*")) for folder in folders):
        return False
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and "GPU" in listed.stdout


def torch_version() -> str:
    """torch's version from its package metadata (no import); by importing it where there is no metadata."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        import torch

        return str(torch.__version__)


def build_root(cache_dir: str) -> str:
    tag = f"torch{torch_version()}-py{sys.version_info.major}{sys.version_info.minor}"
    return str(Path(cache_dir) / "builds" / tag)


# Each JIT cache a child may fill, under the trusted cache folder (a boxed solution's own scratch folder
# replaces every one of them: sandbox/spec.SCRATCH_CACHE_ENV); none may default to the user's home.
TRUSTED_CACHE_ENV = {"TORCH_EXTENSIONS_DIR": "torch_extensions", "TRITON_CACHE_DIR": "triton",
                     "CUPY_CACHE_DIR": "cupy", "NUMBA_CACHE_DIR": "numba", "HELION_CACHE_DIR": "helion",
                     "TORCHINDUCTOR_CACHE_DIR": "inductor", "CUTE_DSL_CACHE_DIR": "cute_dsl",
                     "TILELANG_CACHE_DIR": "tilelang", "TVM_FFI_CACHE_DIR": "tvm_ffi"}

# Helion never autotunes inside a judgement (docs/backends.md, "The Helion rule"): a kernel without a
# config runs Helion's default config ("none" effort), a kernel that asks to search anyway (force_autotune,
# or an effort in its decorator with no config) fails with AutotuningDisallowedInEnvironment, and an
# inherited HELION_FORCE_AUTOTUNE=1 is overridden. Helion reads these when @helion.kernel runs.
HELION_NO_AUTOTUNE = {"HELION_AUTOTUNE_EFFORT": "none", "HELION_DISALLOW_AUTOTUNING": "1",
                      "HELION_FORCE_AUTOTUNE": "0", "HELION_AUTOTUNE_PROGRESS_BAR": "0"}


MALLOC_MMAP_THRESHOLD = 32 << 20


def child_env(device: str, threads: int, cache_dir: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every child starts with: this one's less the judge's own settings and secrets, the
    package importable, the JIT caches in the trusted cache folder, Helion's autotuner off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env["PYTHONUNBUFFERED"] = "1"
    # children import the same kerneljudge as this process, installed or not
    package_parent = str(Path(__file__).resolve().parent.parent.parent)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != package_parent]
    env["PYTHONPATH"] = os.pathsep.join([package_parent] + paths)
    env["OMP_NUM_THREADS"] = str(max(1, threads))
    env.update({name: str(Path(cache_dir) / folder) for name, folder in TRUSTED_CACHE_ENV.items()})
    env.update(HELION_NO_AUTOTUNE)
    # torch's profiler leaves CUPTI attached when a session ends unless told to tear it down, and every launch after
    # it costs more host time (an identity copy of upstream's VanillaRNNHidden: 15.3 -> 20.8 ms end to end on an
    # H100 once its process had profiled): the long-lived reference process profiles for the device clock, so
    # without this its later end-to-end rounds ran slower than a fresh solution process's (issue 33)
    env["TEARDOWN_CUPTI"] = "1"
    # glibc raises its mmap and trim thresholds each time a process frees a large mmapped block, so how fast a
    # tensor of a few MB is allocated depends on what the process freed before: a long-lived reference process
    # (many problems served) allocated from its heap while a fresh solution process still mapped fresh zeroed
    # pages (one process ran a depthwise convolution 15-30% faster after freeing a single 30 MB block: 2-core VM,
    # 2026-12-07): the same code's speed depended on each process's history, not on the code alone.
    # Fixed thresholds (glibc's own dynamic ceiling: 32 MiB, trim at twice that) make every child allocate alike
    # from its first call; a value the user set is kept, and reaches both processes alike
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(MALLOC_MMAP_THRESHOLD))
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(2 * MALLOC_MMAP_THRESHOLD))
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"   # must be set before triton is first imported
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        env.pop("TRITON_INTERPRET", None)
    env.update(extra or {})
    return env


def available_memory() -> int:
    """MemAvailable from /proc/meminfo in bytes; 0 where it cannot be read (then nothing extra is started)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
