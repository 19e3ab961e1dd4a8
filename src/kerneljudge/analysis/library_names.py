"""Which calls into the kernel libraries do the work for the solution (library compute under strict), and which
only allocate, copy, view, compile or launch the solution's own kernels.

The rule has torch_names.py's shape. CuPy mirrors torch: top-level `cupy.*` functions use an allowlist
(allocation, copies, views, dtype and device helpers; new CuPy releases add compute routines, rarely
allocators), whole namespaces compute (cupy.linalg, cupy.fft, cupyx.scipy, the cuBLAS/cuDNN/cuFFT/cuSOLVER/
cuSPARSE bindings), and methods of CuPy arrays use an allowlist. nvmath-python's host APIs call cuBLAS(Lt),
cuFFT, cuSPARSE and friends; `nvmath.device` is header-style device code compiled into the solution's own
numba kernels and does not count. CUTLASS's prebuilt Python ops (`cutlass.op`) and `cupy.fuse` (CuPy writes
the kernel from array code, as torch.compile does) count. numba, cuda.core, Helion and the CuTe DSL expose no
library compute of their own: their calls compile or launch the solution's kernels. Neither does TileLang itself;
the TVM it bundles does: its operator library (`tvm.topi`), its graph compiler (`tvm.relax`) and its bindings of
vendor libraries (`tvm.contrib.cublas`, `cudnn`, `thrust`, ...) write or call the kernels for the solution.
"""

from __future__ import annotations

# dtype constructors (`cp.float32(x)`, `cp.int32(n)` as kernel arguments): scalars, not compute
DTYPES = frozenset({
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp", "float16",
    "float32", "float64", "complex64", "complex128", "half", "single", "double", "byte", "ubyte", "short",
    "ushort", "intc", "uintc", "longlong", "ulonglong", "csingle", "cdouble", "longdouble",
})
# cupy.<name>(...) that do not compute (mirrors torch_names.ALLOWED_TORCH)
CUPY_ALLOWED = DTYPES | frozenset({
    # allocation, copies and transfers
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "array", "asarray",
    "asanyarray", "ascontiguousarray", "asfortranarray", "copy", "copyto", "from_dlpack", "fromDlpack", "asnumpy",
    "arange", "linspace", "logspace", "eye", "identity", "ndarray", "pad",
    # views and reshapes
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims", "broadcast_to",
    "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit",
    "dsplit",
    # inspection, dtypes, devices, memory pools, building the solution's own kernels
    "shape", "ndim", "size", "result_type", "can_cast", "promote_types", "dtype", "finfo", "iinfo",
    "get_array_module", "get_default_memory_pool", "get_default_pinned_memory_pool", "is_available",
    "show_config", "RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel",
})
# cupy.<sub>.* namespaces that never compute (random draws are initialisation, as torch.rand is)
CUPY_QUIET = ("cupy.cuda.", "cupy.random.", "cupy.testing.", "cupy.lib.stride_tricks.", "cupyx.jit.",
              "cupyx.profiler.", "cupy_backends.cuda.api.", "cupy_backends.cuda.libs.nvrtc.",
              "cupy_backends.cuda.libs.curand.", "cupy_backends.cuda.stream.")
# namespaces whose every function computes (checked before CUPY_QUIET: cupy.cuda.cublas is under cupy.cuda)
LIBRARY_NAMESPACES = (
    "cupy.linalg.", "cupy.fft.", "cupy.cublas.", "cupy.cuda.cublas.", "cupy.cuda.cublasLt.", "cupy.cuda.cudnn.",
    "cupy.cuda.cufft.", "cupy.cuda.cusolver.", "cupy.cuda.cusparse.", "cupy.cuda.cutensor.", "cupy.cuda.thrust.",
    "cupy.cuda.cub.", "cupy_backends.cuda.libs.", "cupyx.scipy.", "cupyx.cudnn.", "cupyx.cusolver.",
    "cupyx.cusparse.", "cupyx.cutensor.", "cupyx.lapack.", "cupyx.linalg.", "cupyx.signal.",
    "nvmath.linalg.", "nvmath.fft.", "nvmath.sparse.", "nvmath.distributed.", "nvmath.bindings.",
    "cutlass.op.",
)
# TVM (TileLang bundles it; `import tvm` or `from tilelang import tvm`): its operator library, its graph compiler
# and its bindings of vendor libraries write or call the kernels; reported wherever they appear, as plans are
TVM_LIBRARIES = tuple(f"{root}.{name}." for root in ("tvm", "tilelang.tvm") for name in (
    "topi", "relax", "contrib.cublas", "contrib.cublaslt", "contrib.cudnn", "contrib.thrust", "contrib.cutlass",
    "contrib.cblas", "contrib.mkl", "contrib.dnnl", "contrib.hipblas"))
# inside LIBRARY_NAMESPACES, what only initialises or compiles
LIBRARY_QUIET = ("nvmath.bindings.curand.", "nvmath.bindings.nvrtc.", "nvmath.bindings.nvjitlink.")
# cupyx.<name>(...) outside those namespaces that do not compute (pinned host allocation, error states)
CUPYX_ALLOWED = frozenset({"empty_pinned", "empty_like_pinned", "zeros_pinned", "zeros_like_pinned",
                           "get_runtime_info", "allow_synchronize", "errstate", "seterr", "geterr"})
# code generators (the library writes the kernel from array code, as torch.compile does) and prebuilt ops;
# reported wherever they appear, since a plan built in __init__ runs in forward
LIBRARY_CODEGEN = ("cupy.fuse", "cutlass.op.", *TVM_LIBRARIES)
LIBRARY_LABELS = (("cupy", "CuPy"), ("cupyx", "CuPy"), ("cupy_backends", "CuPy"), ("nvmath", "nvmath-python"),
                  ("cutlass", "CUTLASS"), ("tvm", "TVM"), ("tilelang", "TVM"))

# methods of CuPy arrays that do not compute (mirrors torch_names.ALLOWED_METHODS)
ARRAY_ALLOWED_METHODS = frozenset({
    "reshape", "ravel", "flatten", "view", "transpose", "swapaxes", "squeeze", "diagonal", "astype", "copy", "fill",
    "get", "set", "item", "tolist", "toDlpack", "__dlpack__", "__dlpack_device__", "reduced_view", "data_ptr",
    "__len__", "__getitem__", "__setitem__", "tobytes",
})
# methods and attributes whose result is not an array
ARRAY_NON_ARRAY = frozenset({"item", "tolist", "get", "toDlpack", "__dlpack__", "__dlpack_device__", "tobytes",
                             "shape", "dtype", "ndim", "size", "nbytes", "strides", "itemsize", "device", "data",
                             "flags", "__cuda_array_interface__"})


def label(q: str) -> str:
    root = q.split(".")[0]
    return next((name for r, name in LIBRARY_LABELS if r == root), root)


def library_call_is_compute(q: str) -> bool:
    """Whether calling dotted name `q` (already resolved through imports) is library compute."""
    if q.startswith(LIBRARY_QUIET):
        return False
    if q.startswith(LIBRARY_NAMESPACES + LIBRARY_CODEGEN):
        return True
    parts = q.split(".")
    if parts[0] not in ("cupy", "cupyx") or len(parts) < 2 or q.startswith(CUPY_QUIET):
        return False
    name = parts[1]
    if len(parts) > 2 and parts[0] == "cupy" and name == "ndarray":  # unbound cupy.ndarray.sum(x)
        return parts[2] not in ARRAY_ALLOWED_METHODS
    if parts[0] == "cupyx":
        return len(parts) == 2 and name not in CUPYX_ALLOWED and not name[:1].isupper()
    if len(parts) > 2:
        return False  # an unknown cupy submodule: not positively compute (being wrongly accused is worse)
    return not (name in CUPY_ALLOWED or name[:1].isupper() or name.startswith(("is_", "get_", "set_")))


def returns_array(q: str) -> bool:
    """Whether calling a cupy/cupyx name yields a CuPy array (for the array-likeness of names in forward)."""
    parts = q.split(".")
    if parts[0] not in ("cupy", "cupyx") or q.startswith(("cupy.cuda.", "cupyx.jit.", "cupyx.profiler.")):
        return False
    name = parts[-1]
    return not (name in DTYPES or name[:1].isupper() or name.startswith(("is_", "get_", "set_", "show_"))
                or name in ("shape", "ndim", "size", "result_type", "can_cast", "promote_types", "dtype", "finfo",
                            "iinfo", "asnumpy", "fuse"))


def is_codegen_or_plan(q: str) -> bool:
    """Whether `q` names a library code generator, prebuilt op, or stateful plan class (`nvmath.linalg.advanced.
    Matmul`, whose `execute()` in forward cannot be traced back to it): reported wherever it appears."""
    if q.startswith(LIBRARY_QUIET):
        return False
    return q.startswith(LIBRARY_CODEGEN) or (q.startswith(LIBRARY_NAMESPACES) and q.rsplit(".", 1)[-1][:1].isupper())


__all__ = ["ARRAY_ALLOWED_METHODS", "ARRAY_NON_ARRAY", "CUPY_ALLOWED", "LIBRARY_NAMESPACES", "is_codegen_or_plan",
           "label", "library_call_is_compute", "returns_array"]
