"""Which torch names do the work (compute) and which only allocate, reshape, cast or inspect.

The principle, applied to Python and C++ alike: allocation, views/reshapes, dtype/device casts and plain
copies (clone, contiguous, copy_, fill_, zero_, pad) are allowed under strict; anything that computes new
values from tensor contents is PyTorch compute.  Top-level `torch.*` functions use an allowlist (new
torch releases add compute ops, rarely allocators); tensor methods use the allowlist when the receiver
is known to be a tensor and a denylist when it might be something else (an extension, a list, a logger).
"""

from __future__ import annotations

# torch.<name>(...) that do not compute
ALLOWED_TORCH = frozenset({
    # allocation and random initialisation
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack", "scalar_tensor", "arange", "range",
    "linspace",
    "logspace", "eye", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
    "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    # views, reshapes and copies
    "view_as_real", "view_as_complex", "reshape", "flatten", "unflatten", "ravel", "permute", "transpose",
    "swapaxes", "swapdims", "movedim", "moveaxis", "squeeze", "unsqueeze", "narrow", "select", "split", "chunk",
    "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "t", "adjoint", "as_strided", "broadcast_to",
    "broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d", "detach", "clone",
    # inspection, dtype/device handling, grad modes
    "is_tensor", "is_storage", "is_floating_point", "is_complex", "numel", "result_type", "promote_types",
    "can_cast", "get_default_dtype", "get_default_device", "set_grad_enabled", "is_grad_enabled", "no_grad",
    "enable_grad", "inference_mode", "is_inference_mode_enabled", "device", "dtype", "finfo", "iinfo", "typename",
    "get_device", "compiled_with_cxx11_abi", "get_num_threads", "set_num_threads", "get_num_interop_threads",
    "is_autocast_enabled", "autocast", "is_same_size", "_assert", "sym_int", "sym_float", "sym_not",
    "set_printoptions",
})
# torch.<name>(...) whose result is not a tensor (for the tensor-likeness inference)
NON_TENSOR_TORCH = frozenset({
    "is_tensor", "is_storage", "is_floating_point", "is_complex", "numel", "result_type", "promote_types",
    "can_cast", "get_default_dtype", "get_default_device", "set_grad_enabled", "is_grad_enabled", "no_grad",
    "enable_grad", "inference_mode", "device", "dtype", "finfo", "iinfo", "typename", "get_device", "Size",
    "Generator", "manual_seed", "broadcast_shapes", "is_same_size", "get_num_threads", "autocast",
})
# namespaces whose every function computes
COMPUTE_NAMESPACES = (
    "torch.nn.functional.", "torch.ops.aten.", "torch.ops.prims.", "torch.ops.prim.", "torch.ops.quantized.",
    "torch.ops._quantized.", "torch.ops.mkldnn.", "torch.ops.torchvision.", "torch._C._nn.",
    "torch._C._VariableFunctions.", "torch._C._linalg.", "torch._C._fft.", "torch._C._special.",
    "torch._C._nested.", "torch._C._sparse.", "torch._VF.", "torch.linalg.", "torch.fft.", "torch.special.",
    "torch.sparse.", "torch._refs.", "torch._prims.", "torch._decomp.", "torch.nested.", "torch.functional.",
)
ALLOWED_FUNCTIONAL = frozenset({"pad"})
# torch.<name> that are modules, not functions (torch.<name>.<x> is judged by the rules for that module)
TORCH_SUBMODULES = frozenset({
    "nn", "cuda", "backends", "utils", "library", "ops", "linalg", "fft", "special", "sparse", "_C", "_VF", "jit",
    "autograd", "distributed", "testing", "_dynamo", "_inductor", "compiler", "profiler", "amp", "cpu", "mps",
    "xpu", "hub", "onnx", "export", "fx", "overrides", "types", "version", "random", "multiprocessing", "futures",
    "quantization", "ao", "nested", "masked", "func", "signal", "_refs", "_prims", "_decomp", "_higher_order_ops",
    "package", "distributions", "optim", "serialization", "storage", "_tensor", "functional", "Tensor",
    "TensorBase", "accelerator", "device", "dtype", "finfo", "iinfo", "Size", "_utils", "_ops", "_library",
})  # F.pad only copies into a larger allocation
# torch code generators: PyTorch ops turned into kernels by torch, not by the solution
TORCH_CODEGEN = ("torch.compile", "torch._dynamo", "torch._inductor", "torch.jit.script", "torch.jit.trace")
TENSOR_CODEGEN_NOTE = ("kernels torch generates from PyTorch code (torch.compile, TorchScript) are PyTorch compute; "
                       "under strict the work must happen in the solution's own kernels")
# torch.nn module classes that do not compute when called (containers are judged by their contents)
NN_NONCOMPUTE = frozenset({
    "Parameter", "Buffer", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict", "Module", "Sequential",
    "Identity", "Flatten", "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "UninitializedParameter", "UninitializedBuffer",
})
NN_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})

# tensor methods that do not compute (plus list/dict methods, since a "tensor-like" may be a list)
ALLOWED_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "permute", "transpose", "t", "contiguous",
    "unsqueeze", "squeeze", "expand", "expand_as", "narrow", "select", "split", "chunk", "unbind", "tensor_split",
    "as_strided", "unfold", "movedim", "moveaxis", "swapaxes", "swapdims", "diagonal", "resize_", "resize_as_",
    "size", "numel", "dim", "ndimension", "nelement", "stride", "storage_offset", "data_ptr", "element_size",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "get_device", "type", "is_pinned", "is_shared",
    "to", "float", "half", "double", "bfloat16", "int", "long", "bool", "short", "char", "byte", "cuda", "cpu",
    "type_as", "clone", "copy_", "detach", "detach_", "requires_grad_", "zero_", "fill_", "new_empty", "new_zeros",
    "new_ones", "new_full", "new_tensor", "new_empty_strided", "item", "tolist", "numpy", "record_stream",
    "pin_memory", "share_memory_", "untyped_storage", "storage", "retain_grad", "register_hook", "is_set_to",
    "__len__", "__setitem__", "__getitem__", "contiguous_", "view_as_real", "dim_order",
    "_make_subclass", "_make_wrapper_subclass", "as_subclass",  # reported as tensor_subclass instead
    "append", "extend", "insert", "pop", "index", "count", "copy", "keys", "values", "items", "get", "setdefault",
})
# tensor methods whose result is not a tensor
NON_TENSOR_METHODS = frozenset({
    "size", "numel", "dim", "ndimension", "nelement", "stride", "storage_offset", "data_ptr", "element_size",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "get_device", "item", "tolist", "__len__",
    "untyped_storage", "storage", "is_pinned", "is_shared", "index", "count", "keys", "dim_order",
})
NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad", "names",
                              "is_leaf", "itemsize", "nbytes", "is_sparse", "is_quantized", "is_meta", "grad_fn"})
TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data", "grad"})
# names whose use on a parameter shows it is a tensor (helpers get no type information otherwise)
TENSOR_HINTS = (ALLOWED_METHODS - {"append", "extend", "insert", "pop", "index", "count", "copy", "keys", "values",
                                   "items", "get", "setdefault", "__len__", "__getitem__", "__setitem__", "type",
                                   "split", "to", "float", "int", "bool"}) | NON_TENSOR_ATTRS

# tensor methods that compute: used when the receiver might not be a tensor
COMPUTE_METHODS = frozenset({
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmm_", "addbmm", "baddbmm",
    "addmv", "addr", "tensordot", "kron", "matrix_power", "relu", "relu_", "sigmoid", "sigmoid_", "tanh", "tanh_",
    "softmax", "log_softmax", "exp", "exp_", "exp2", "expm1", "log", "log_", "log2", "log10", "log1p", "sqrt",
    "sqrt_", "rsqrt", "pow", "pow_", "abs", "abs_", "neg", "neg_", "reciprocal", "sum", "mean", "prod", "max",
    "min", "amax", "amin", "aminmax", "argmax", "argmin", "std", "var", "norm", "cumsum", "cumprod", "cummax",
    "cummin", "logsumexp", "logcumsumexp", "clamp", "clamp_", "clamp_min", "clamp_max", "clip", "clip_", "sin",
    "cos", "tan", "erf", "erfc", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide",
    "floor_divide", "fmod", "remainder", "addcmul", "addcdiv", "lerp", "where", "masked_fill", "masked_fill_",
    "masked_scatter", "index_select", "index_add", "index_add_", "index_copy", "gather", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "scatter_reduce", "sort", "argsort", "topk", "kthvalue", "median", "mode",
    "sign", "floor", "ceil", "round", "trunc", "frac", "maximum", "minimum", "square", "triu", "tril", "any",
    "all", "eq", "ne", "lt", "gt", "le", "ge", "logical_and", "logical_or", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "isnan", "isinf", "nan_to_num", "count_nonzero", "nonzero", "unique", "histc",
    "bincount", "hardtanh", "softplus", "sinh", "cosh", "atan", "asin", "acos", "atan2", "sigmoid_", "silu",
    "gelu", "mish", "hardswish", "leaky_relu", "elu", "celu", "selu", "logit", "einsum", "conv1d", "conv2d",
    "conv3d", "linear", "flip", "roll", "repeat", "repeat_interleave", "tile", "cross", "diff", "trace",
    "det", "inverse", "pinverse", "cholesky", "qr", "svd", "lstsq", "__matmul__", "__rmatmul__", "__add__",
    "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
    "__neg__", "__iadd__", "__imul__", "__isub__", "__itruediv__", "apply_", "map_",
})
# set.add, list.sort, logger.log
AMBIGUOUS_METHODS = frozenset({"add", "sort", "log", "round", "copy", "index", "count"})

OPERATOR_COMPUTE = frozenset({"matmul", "imatmul", "mul", "imul", "add", "iadd", "sub", "isub", "truediv",
                              "itruediv", "floordiv", "pow", "neg", "mod"})
ATEN_LIKE_OPS = frozenset({"aten", "prims", "prim", "quantized", "_quantized", "mkldnn", "torchvision"})


def torch_call_is_compute(q: str) -> bool:
    """Whether calling dotted torch name `q` computes (nn module constructors are handled elsewhere)."""
    parts = q.split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return False
    if q.startswith("torch.nn.functional."):
        return parts[3] not in ALLOWED_FUNCTIONAL if len(parts) > 3 else False
    if q.startswith(COMPUTE_NAMESPACES) or q.startswith(TORCH_CODEGEN):
        return True
    if parts[1] == "ops" and len(parts) > 2:
        return parts[2] in ATEN_LIKE_OPS
    if parts[1] in ("Tensor", "TensorBase") and len(parts) > 2:
        return parts[2] not in ALLOWED_METHODS
    if parts[1] not in TORCH_SUBMODULES:  # torch.mm, or torch.mm.__call__ / torch.mm.__wrapped__
        name = parts[1]
        return not (name in ALLOWED_TORCH or name[:1].isupper() or name.startswith("set_") or name.startswith("is_"))
    return False


def torch_reference_is_compute(q: str) -> bool:
    """Whether a bare reference (`map(torch.relu, xs)`) names a compute function; dtypes and constants
    such as torch.float32 or torch.inf do not."""
    parts = q.split(".")
    if q.startswith(COMPUTE_NAMESPACES) and not q.startswith("torch.nn.functional.pad"):
        return True
    return len(parts) >= 2 and parts[1] in COMPUTE_METHODS and torch_call_is_compute(q)


def nn_module_class(q: str) -> str | None:
    """`torch.nn.Conv2d` -> "Conv2d" when q names a torch.nn module class, else None."""
    parts = q.split(".")
    if len(parts) >= 3 and parts[:2] == ["torch", "nn"] and (len(parts) == 3 or parts[2] == "modules"):
        name = parts[-1]
        if name[:1].isupper():
            return name
    return None


def nn_is_compute(name: str) -> bool:
    return name not in NN_NONCOMPUTE


_NON_TENSOR_NAMESPACES = frozenset({"cuda", "backends", "utils", "library", "testing", "distributed", "jit", "autograd",
                                    "profiler", "compiler", "_dynamo", "_inductor", "version", "hub", "nn", "optim"})


_TENSOR_HOLDERS = frozenset({"Parameter", "Buffer", "ParameterList", "ParameterDict"})


def torch_call_returns_tensor(q: str) -> bool:
    """Whether calling dotted torch name `q` yields a tensor (streams, events, sizes, modules do not)."""
    parts = q.split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return False
    if parts[1] in NON_TENSOR_TORCH or parts[1] in _NON_TENSOR_NAMESPACES:
        return q.startswith("torch.nn.functional.") or (parts[1] == "nn" and parts[-1] in _TENSOR_HOLDERS)
    return not (parts[-1][:1].isupper() and parts[-1] != "Tensor")
