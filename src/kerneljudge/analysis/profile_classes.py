"""The class of one profile row: the solution's own work (`custom`), torch's or a vendor library's compute
(`library_compute`), allocation and copies (`allowed`), or unknown (`other`). See kernels.py for the rules.

Kernel names arrive as the profiler shows them: usually demangled C++ (`void ns::k<float>(float*)`), sometimes
still mangled (`_ZN6cudapy8__main__5scaleB2v1...E5Array...` for a numba kernel), or plain (Triton, CuPy's
extern "C" kernels, the CuTe DSL's `kernel_cutlass_<function>_...`).
"""

from __future__ import annotations

import re
from typing import Optional

from kerneljudge.analysis.kernel_names import HEADER_LIBRARIES

# op namespaces that belong to torch itself
TORCH_OP_NAMESPACES = frozenset({"aten", "prims", "prim", "quantized", "_quantized", "mkldnn", "torchvision",
                                 "_c10d_functional", "c10d", "inductor", "triton", "torch_tensorrt"})
# ATen ops that only allocate, view, reshape, cast, copy, fill, index or draw random numbers
ALLOWED_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor",
    "lift", "lift_fresh", "lift_fresh_copy", "zero_", "fill_", "copy_", "_copy_from", "_copy_from_and_resize",
    "clone", "contiguous", "to", "_to_copy", "type_as", "view", "_unsafe_view", "view_as", "reshape",
    "_reshape_alias", "reshape_as", "flatten", "unflatten", "ravel", "as_strided", "as_strided_", "expand",
    "expand_as", "broadcast_to", "broadcast_tensors", "permute", "movedim", "moveaxis", "transpose",
    "transpose_", "swapaxes", "swapdims", "t", "t_", "adjoint", "numpy_T", "mT", "mH", "squeeze", "squeeze_",
    "unsqueeze", "unsqueeze_", "narrow", "slice", "select", "split", "split_with_sizes", "tensor_split", "chunk",
    "unbind", "unfold", "diagonal", "detach", "detach_", "alias", "view_as_real", "view_as_complex",
    "resolve_conj", "resolve_neg", "_conj", "conj", "_neg_view", "resize_", "resize_as_", "set_", "item",
    "_local_scalar_dense", "is_nonzero", "result_type", "size", "stride", "numel", "dim", "sym_size",
    "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size",
    "_has_compatible_shallow_copy_type", "record_stream", "pin_memory", "_pin_memory", "is_pinned", "arange",
    "linspace", "logspace", "range", "eye", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like",
    "randperm", "normal", "normal_", "uniform_", "random_", "exponential_", "cauchy_", "log_normal_",
    "geometric_", "pad", "constant_pad_nd", "cat", "_cat", "concat", "concatenate", "stack", "hstack", "vstack",
    "index", "_unsafe_index", "index_put_", "_index_put_impl_", "dropout", "feature_dropout", "alpha_dropout",
    "_assert_async", "_assert_scalar", "detach_copy", "_efficientzerotensor", "align_to", "refine_names",
    "rename", "_nested_tensor_from_mask_left_aligned", "_version", "output_nr", "requires_grad_",
    "hsplit", "vsplit", "dsplit", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "atleast_1d",
    "atleast_2d", "atleast_3d", "is_floating_point", "is_complex", "is_signed", "can_cast", "promote_types",
    "masked_fill_", "new_tensor", "_share_memory_", "is_set_to", "copy", "_assert_tensor_metadata",
    "expand_copy", "permute_copy", "view_copy", "slice_copy", "select_copy", "transpose_copy", "unsqueeze_copy",
    "squeeze_copy", "alias_copy", "as_strided_copy", "t_copy", "diagonal_copy", "unbind_copy", "split_copy",
    "_reshape_copy", "fill_diagonal_", "empty_pinned", "_empty_affine_quantized",
})
# CPU annotations torch puts around compiled code (torch.compile / inductor): library compute
COMPILED_MARKERS = ("Torch-Compiled Region", "CompiledFxGraph", "CompiledFunction", "TorchDynamo",
                    "## Call CompiledFxGraph", "inductor")
# kernels of torch's own at::native machinery and bundled libraries; names with these are never custom
TORCH_KERNEL = re.compile(r"(?<![\w])(?:at|c10|at_cuda_detail|pytorch_flash|pytorch_fmha)::|fmha_cutlass")
# torch kernels that only copy, fill, concatenate, index or draw random numbers
ALLOWED_KERNEL = re.compile(
    r"copy|Copy|FillFunctor|fill_kernel|fill_|zero|CatArray|cat_|index_elementwise|index_put|indexing_backward|"
    r"arange|range_|linspace|logspace|elementwise_kernel_with_index|distribution|philox|random|normal|uniform|"
    r"bernoulli|pad|contiguous|clone|transpose|permute", re.IGNORECASE)
# vendor library kernels (cuBLAS, cuBLASLt, CUTLASS, cuDNN, cuFFT, cuSPARSE, ...) and inductor kernels
LIBRARY_KERNEL = re.compile(
    r"cublas|nvjet|xmma|cutlass|cudnn|cufft|regular_fft|vector_fft|cusparse|cusolver|cutensor|magma|"
    r"(?:^|[^a-z])(?:sm\d\d|ampere|volta|turing|hopper|maxwell|ada|blackwell)_[a-z0-9]*(?:gemm|conv|fprop|dgrad|"
    r"wgrad|sgemm|hgemm|s\d+gemm)|gemv2[TN]_kernel|gemvNSP|gemmSN|gemmk1_kernel|splitKreduce_kernel|"
    r"implicit_convolve_sgemm|fft[12]d_[rc]2[rc]|triton_(?:poi|red|per|tem|for|mm|bmm)_")
# CuPy's own kernels (its ufuncs, reductions and routines are named cupy_*, cupyx_*): library compute unless
# they copy or fill (ALLOWED_KERNEL)
CUPY_KERNEL = re.compile(r"^(?:void )?cupyx?_")
# CuTe DSL kernels are compiled from Python source in the solution's own process: when their name is not one
# of the solution's, they are unknown ("other"), never a vendor library's (LIBRARY_KERNEL matches "cutlass")
CUTE_DSL_PREFIX = "kernel_cutlass_"
# numba's mangled names carry ABI tags after the function name: `scale[abi:v1][abi:cw51...]`
_ABI_TAGS = re.compile(r"\[abi:[^\]]*\]")


def base_name(kernel: str) -> str:
    """`void ns::my_kernel<float, 4>(float const*, ...)` -> `my_kernel`; Triton names pass unchanged; numba's
    `cudapy::mod::scale[abi:v1][abi:cw51...](Array<...>)` and its mangled form `_ZN6cudapy3mod5scaleB2v1...` ->
    `scale`."""
    s = kernel.strip()
    if s.startswith("_Z"):
        return _mangled_name(s) or s
    s = _ABI_TAGS.sub("", s)
    for prefix in ("void ", "static ", "__global__ "):
        if s.startswith(prefix):
            s = s[len(prefix):]
    depth, cut = 0, len(s)
    for i, c in enumerate(s):  # the argument list starts at the first '(' outside template brackets
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0 and i > 0:
            cut = i
            break
    s = s[:cut]
    out, depth = [], 0
    for c in s:  # drop template arguments
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    s = "".join(out).strip()
    return s.rsplit("::", 1)[-1].strip() if "::" in s else s


def _mangled_name(symbol: str) -> Optional[str]:
    """The function's own name in an Itanium-mangled symbol: the last `<length><name>` of a nested name
    (`_ZN<len><ns>...<len><name>[B<len><abi tag>]...E...`), or the first of a plain one (`_Z9my_kernelPf`)."""
    nested = symbol.startswith("_ZN")
    i, last = (3 if nested else 2), None
    while i < len(symbol):
        tag = symbol[i] == "B"  # an ABI tag follows the name it belongs to
        j = i + 1 if tag else i
        k = j
        while k < len(symbol) and symbol[k].isdigit():
            k += 1
        if k == j:
            break  # `E`, template arguments (`I`) or parameter types: the name is complete
        length = int(symbol[j:k])
        if not tag:
            last = symbol[k:k + length]
        i = k + length
        if not nested and not tag:
            break
    return last


_TRITON_SUFFIX = re.compile(r"^(?:_[0-9][0-9a-z]*)+$")  # older Triton appends signature tags (_0d1d2d3de)


def is_custom(kernel: str, custom: frozenset[str]) -> bool:
    if not custom:
        return False
    name = base_name(kernel)
    if name in custom:
        return True
    for c in custom:
        if c.startswith(CUTE_DSL_PREFIX) and name.startswith(c + "_"):
            return True  # the CuTe DSL appends the mangled argument types to `kernel_cutlass_<function>`
        if len(c) >= 3 and name.startswith(c) and _TRITON_SUFFIX.match(name[len(c):]):
            return True
    return False


def op_class(name: str) -> str:
    """Class of a CPU-side op or annotation name (`aten::mm`, `myops::scale_relu`, a record_function)."""
    if any(m in name for m in COMPILED_MARKERS):
        return "library_compute"
    if "::" in name:
        ns, op = name.split("::", 1)
        if ns in TORCH_OP_NAMESPACES:
            op = op.split(".", 1)[0]  # overload names: aten::add.Tensor
            if ns in ("aten", "prims", "prim") and op in ALLOWED_OPS:
                return "allowed"
            return "library_compute"
    return "custom"  # the solution's own op or annotation: its time is its own code


def kernel_class(kernel: str, chain: list[str], custom: frozenset[str], libraries: frozenset[str] = frozenset(),
                 kind: str = "kernel") -> str:
    """Class of a device activity (kernel, memcpy, memset) launched under the ops in `chain` (outermost first)."""
    if chain:
        if op_class(chain[0]) == "allowed":
            return "allowed"
        if any(op_class(c) == "library_compute" for c in chain):
            return "library_compute"
    if kind in ("memcpy", "memset") or kernel.startswith(("Memcpy", "Memset", "memcpy", "memset")):
        return "allowed"
    if TORCH_KERNEL.search(kernel):
        return "allowed" if ALLOWED_KERNEL.search(kernel) else "library_compute"
    if is_custom(kernel, custom):
        return "custom"
    for lib in libraries:  # the solution compiled CUB/Thrust/CUTLASS templates into its own kernels
        if HEADER_LIBRARIES[lib][0].search(kernel):
            return "custom"
    if CUPY_KERNEL.search(kernel):
        return "allowed" if ALLOWED_KERNEL.search(kernel) else "library_compute"
    if kernel.startswith(CUTE_DSL_PREFIX):
        return "other"
    return "library_compute" if LIBRARY_KERNEL.search(kernel) else "other"


def cpu_op_class(name: str, chain: list[str]) -> str:
    """Class of a CPU op row (CPU runs): everything inside an allowed torch op is allowed; anything inside
    (or being) a library op is library compute; the solution's own ops and annotations are custom."""
    if chain and op_class(chain[0]) == "allowed":
        return "allowed"
    if any(op_class(c) == "library_compute" for c in chain + [name]):
        return "library_compute"
    return op_class(name)




__all__ = ["ALLOWED_KERNEL", "ALLOWED_OPS", "COMPILED_MARKERS", "CUPY_KERNEL", "CUTE_DSL_PREFIX", "LIBRARY_KERNEL",
           "TORCH_KERNEL", "TORCH_OP_NAMESPACES", "base_name", "cpu_op_class", "is_custom", "kernel_class", "op_class"]
