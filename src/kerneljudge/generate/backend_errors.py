"""Naming the error a solution failed with, in the words of the backend that raised it, for refinement feedback.

    classify_error(text) -> dict | None     {kind, backend, headline, diagnostic, hint}, or None when unknown
    ERROR_MARKERS                           a regular expression for the lines of a log that report an error

A build or run log (the verdict's error_excerpt) is a traceback, often with a compiler's messages inside it. The
kinds below are tried in order, most specific first; the first one that matches a line names the error:
`headline` is the last line it matches (the exception as Python raised it), `diagnostic` the compiler's first
message of the form `file(12): error: ...` or `file:12:3: error: ...` (NVRTC, nvcc, gcc), where there is one,
and `hint` one sentence on where to look. The text passed in is expected to be redacted already (redaction.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class ErrorKind:
    name: str                 # what the model is told the error is
    backend: Optional[str]    # the backend whose error it is (core.types.BACKENDS), None for any
    pattern: re.Pattern       # a line of the log that shows this kind
    hint: str


def _kind(name: str, backend: Optional[str], pattern: str, hint: str) -> ErrorKind:
    return ErrorKind(name, backend, re.compile(pattern), hint)


_COMPILER_HINT = ("the compiler's first error (file and line of the kernel source) is usually the one to fix; "
                  "later ones often follow from it")

KINDS: tuple[ErrorKind, ...] = (
    _kind("CuPy kernel compile error (NVRTC)", "cupy", r"CompileException",
          "the CUDA source of a RawKernel, RawModule or ElementwiseKernel did not compile; " + _COMPILER_HINT),
    _kind("CuPy CUDA driver error", "cupy", r"CUDADriverError|CUDARuntimeError",
          "a CuPy launch or allocation failed: check grid and block sizes, argument types (NumPy scalars of the "
          "parameter types) and the indices the kernel reads and writes"),
    _kind("cuda.core compile error (NVRTC)", "cuda_core", r"NVRTCError|NVRTC_ERROR_\w+",
          "the CUDA C++ passed to cuda.core's Program did not compile; " + _COMPILER_HINT),
    _kind("cuda.core CUDA error", "cuda_core", r"cuda\.core\S*CUDAError|\bCUDAError: CUDA_ERROR_\w+",
          "a cuda.core call failed: check the LaunchConfig, the kernel's argument list (pointers as data_ptr(), "
          "scalars as NumPy scalars of the parameter types) and out-of-bounds accesses"),
    _kind("Numba typing error", "numba", r"TypingError",
          "Numba could not type a @cuda.jit function: the lines after 'TypingError' name the operation and the "
          "argument types it saw (kernels can use only Numba-supported Python, math.* and cuda.* inside)"),
    _kind("Numba lowering error", "numba", r"LoweringError", "Numba typed the kernel but could not generate code "
          "for a line of it; the message names the line"),
    _kind("Numba CUDA error", "numba", r"CudaAPIError|CudaSupportError|NumbaError|NumbaValueError|NumbaTypeError",
          "a Numba CUDA call failed: check the launch configuration, the arrays passed (cuda.as_cuda_array of "
          "contiguous, detached tensors) and the stream"),
    _kind("Helion config error", "helion", r"helion\.exc\.InvalidConfig|\bInvalidConfig\b",
          "the fixed helion.Config does not fit the kernel at this shape: give one block size per hl.tile "
          "dimension and only the fields the kernel has"),
    _kind("Helion error", "helion", r"helion\.exc\.\w+|Helion compiler \w+ codegen error",
          "Helion could not compile the kernel: the message names the construct; inside hl.tile loops use "
          "PyTorch operations on tiles, outside them only allocation, sizes and views"),
    _kind("CuTe DSL error", "cute", r"\bDSL\w*Error\b|cutlass\.base_dsl|cutlass\.cute\S*Error",
          "the CuTe DSL could not trace or compile the @cute.jit / @cute.kernel functions: the message names the "
          "expression; values inside kernels must be CuTe types (cutlass.Int32, cutlass.Float32, tensors)"),
    _kind("TileLang kernel argument error", "tilelang",
          r"kernel \w+ input \w+ .*(?:mismatch|violates)|mismatch for parameter \w+|Kernel expected \d+ inputs, "
          r"but \d+|Expected \d+ inputs, got \d+",
          "a compiled TileLang kernel was called with tensors that do not match its T.Tensor parameters: same "
          "count and order, the shapes and dtype it was compiled for, contiguous, on the GPU (compile one kernel "
          "per shape and dtype)"),
    _kind("TileLang compile error", "tilelang",
          r"\btvm\.error\.\w+|\bTVMError\b|Failed to build prim_func|tvm_kernels\.cu\(\d+\): error",
          "TileLang could not build or lower the @T.prim_func (or nvcc its generated CUDA): the message names the "
          "buffer, layout or expression; inside T.Kernel use T.* operations on buffer elements, fragments whose "
          "shapes match their reductions, and guard indices with if / T.if_then_else"),
    _kind("Triton compile error", "triton", r"CompilationError|triton\.compiler\.errors",
          "Triton could not compile a @triton.jit function; the message points at the line and column"),
    _kind("Triton out of resources", "triton", r"OutOfResources",
          "a Triton kernel asks for more shared memory or registers than the GPU has: use smaller blocks"),
    _kind("C++/CUDA build error (load_inline)", None, r"Error building extension|ninja: build stopped",
          "load_inline could not build the extension; " + _COMPILER_HINT),
    _kind("CUDA runtime error", None, r"CUDA error: |CUDA_ERROR_\w+|AcceleratorError|cudaError\w+",
          "a kernel failed on the GPU (often an out-of-bounds access or a bad launch configuration); CUDA "
          "reports such errors late, so the Python line in the traceback may not be the kernel at fault"),
)

_DIAGNOSTIC = re.compile(r"(\(\d+\)|:\d+(:\d+)?):\s*(fatal )?error\b", re.IGNORECASE)

ERROR_MARKERS = re.compile(
    r"error|exception|traceback|undefined|fatal|failed|assert|invalid|nvrtc|helion\.exc|unknown attribute|"
    r"no implementation of function|cannot determine|untyped global name|unsupported", re.IGNORECASE)


def classify_error(text: str) -> Optional[dict[str, Any]]:
    """The error kind a build or run log shows (see the module docstring), or None."""
    lines = [ln.strip() for ln in (text or "").replace("\r\n", "\n").split("\n") if ln.strip()]
    if not lines:
        return None
    for kind in KINDS:
        hits = [ln for ln in lines if kind.pattern.search(ln)]
        if hits:
            diagnostic = next((ln for ln in lines if _DIAGNOSTIC.search(ln)), None)
            return {"kind": kind.name, "backend": kind.backend, "headline": _shorten(hits[-1]),
                    "diagnostic": _shorten(diagnostic) if diagnostic else None, "hint": kind.hint}
    return None


def _shorten(line: str, limit: int = 300) -> str:
    return line if len(line) <= limit else line[:limit - 5] + " [...]"
