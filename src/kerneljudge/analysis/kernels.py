"""Which kernels and ops in a profile are the solution's own, which are library compute, which only
allocate or copy (threat C3: a decoy kernel runs while a library does the real work).

Runs in the judge's (trusted) process on plain data: the solution's source text (never executed) and the
rows `worker/profiling.py` sent back from the solution's child. Every kernel or op gets one class:

  custom            the solution's own kernels: `__global__` functions and other C++ functions in its
                    embedded sources (load_inline, CuPy and cuda.core code compiled at runtime), `@triton.jit`
                    functions, functions `load_inline` exports, ops it registers itself, CuPy Elementwise/
                    ReductionKernels by name, numba kernels (their mangled names hold the function name),
                    Helion's `_helion_<function>`, the CuTe DSL's `kernel_cutlass_<function>_...`, TileLang's
                    `<prim_func>_kernel` (`_kernel_1`... for further T.Kernel blocks); on the CPU
                    also the time of the call spent outside every torch op (the extension's own loops, the
                    Triton interpreter)
  library_compute   torch and vendor compute: ATen compute ops (aten::mm, aten::add, ...) and everything
                    they launch, cuBLAS/cuBLASLt (nvjet, xmma, sm90_/ampere_ gemm), CUTLASS, cuDNN, cuFFT,
                    flash/memory-efficient attention, at::native kernels that compute, inductor's triton_*,
                    CuPy's own kernels (cupy_*, cupyx_*) that do more than copy or fill
  allowed           allocation and layout: aten::empty/zeros/view/reshape/contiguous/to/copy_/cat/index...,
                    memcpy, memset, fill and copy kernels (the same things strict static analysis allows)
  other             a kernel nothing above recognises (it is never counted as library compute); a CuTe DSL
                    kernel whose function the source does not name lands here, never in library compute

A GPU kernel launched while an ATen op runs takes that op's class (kernels inside aten::mm are library
compute whatever their name; a copy kernel under aten::contiguous is allowed); a kernel launched outside
any op is classified by its name. Being wrongly accused is worse than a miss, so only positively
recognised library work counts against a solution, and the custom-share rule is applied only when the
solution's kernel names could be read from its source.

    custom_kernel_names(source) -> frozenset[str]
    classify(profile, custom) -> Summary        (profile: the child's plain-data reply)
    decide(summary) -> str | None                a reason to reject under strict, or None

This module is the entry point the judge imports; the work is split along its seams:
kernel_names.py (names from source), profile_classes.py (one row's class), profile_summary.py (a whole
profile and the strict decision).
"""

from __future__ import annotations

from kerneljudge.analysis.kernel_names import custom_kernel_names, cxx_function_names, header_libraries
from kerneljudge.analysis.profile_classes import base_name, cpu_op_class, is_custom, kernel_class, op_class
from kerneljudge.analysis.profile_summary import (
    CLASSES, CUSTOM_SHARE_MIN, LIBRARY_SHARE_LIMIT, LIBRARY_VS_REFERENCE, NAME_CHARS, TOP_ROWS, ProfileError, Row,
    Summary, classify, decide, median_run,
)

__all__ = ["CLASSES", "CUSTOM_SHARE_MIN", "LIBRARY_SHARE_LIMIT", "LIBRARY_VS_REFERENCE", "NAME_CHARS", "TOP_ROWS",
           "ProfileError", "Row", "Summary", "base_name", "classify", "cpu_op_class", "custom_kernel_names",
           "cxx_function_names", "decide", "header_libraries", "is_custom", "kernel_class", "median_run", "op_class"]
