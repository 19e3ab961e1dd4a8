"""A solution whose backend needs a GPU, judged on the CPU: a clear build_error before any process starts."""

from __future__ import annotations

import time

import pytest

from kerneljudge.api import judge
from kerneljudge.core.types import BACKENDS, CPU_BACKENDS, JudgeOptions

from .conftest import FIXTURES

GPU_ONLY = [b for b in BACKENDS if b not in CPU_BACKENDS]


@pytest.mark.parametrize("backend", GPU_ONLY)
def test_a_gpu_only_backend_on_the_cpu_is_a_build_error_that_says_why(backend, cache_dir):
    solution = FIXTURES / "solutions" / f"gpu_{backend}_correct_scale_relu.py"
    if backend == "cuda":
        solution = FIXTURES / "solutions" / "gpu_correct_cuda_scale_relu.py"
    started = time.monotonic()
    verdict = judge(FIXTURES / "problems" / "scale_relu.py", solution,
                    JudgeOptions(device="cpu", cache_dir=cache_dir))
    assert verdict.backend == backend and verdict.verdict == "build_error"
    assert "judge runs on the CPU (no CUDA device)" in verdict.reason
    assert time.monotonic() - started < 30   # refused from the source, nothing built or started
