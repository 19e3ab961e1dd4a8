"""What the numerics bounds need to know about a problem's arithmetic: one forward of the reference, counted.

For every tensor the forward makes, three counts along the longest chain of operations that led to it:
  reduction_length  K: roundings in fp32 along the chain. A sum of n terms is n roundings (one per
                    addition), a matmul or convolution is its inner length, an elementwise op is one, a
                    transcendental function (exp, erf, tanh, ...) TRANSCENDENTAL_ROUNDINGS.
  matmul_stages     D: matmul-like ops on the chain (those whose operands TF32 / tensor cores round).
  op_stages         E: ops on the chain that round their result (every op but pure data movement).
A chain is followed through the data: parallel branches take the longest, so a loop over heads counts
once, and a recurrent network counts every step. The output's counts are the largest over its tensors.
Also counted: FLOPs as torch.utils.flop_counter counts them (matmuls, convolutions, attention), and
`flops_reduction_length` = FLOPs / (2 * output elements), for comparison: it misses every reduction with
no FLOP formula (softmax, norms, sums, pooling, attention on the CPU, the CPU LSTM), which is why the
bounds use the chain counts. See docs/numerics.md.

Runs only where the reference runs (a child process, or the calibration script); it executes the
problem's own code, never a solution's. Works on "meta" tensors (shapes only).
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import torch
from torch.utils._pytree import tree_leaves
from torch.utils.weak import WeakTensorKeyDictionary

from .dispatch_mode import UncompiledMode

aten = torch.ops.aten

# ops that move or select data without rounding anything
_EXACT = {
    "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "unsqueeze", "squeeze", "clone",
    "contiguous", "alias", "detach", "lift_fresh", "slice", "select", "index", "index_select", "gather", "cat",
    "stack", "split", "split_with_sizes", "unsafe_split", "unbind", "chunk", "narrow", "flip", "roll",
    "repeat", "constant_pad_nd", "embedding", "masked_fill", "masked_fill_", "where", "max", "min", "amax",
    "amin", "aminmax", "argmax", "argmin", "topk", "sort", "max_pool1d", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "relu", "relu_", "clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max",
    "hardtanh", "hardtanh_", "neg", "abs", "tril", "triu", "diag_embed", "pixel_shuffle", "pixel_unshuffle",
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "index_put", "index_put_", "index_copy",
    "scatter", "scatter_", "copy_", "fill_", "zero_", "zeros", "zeros_like", "ones", "ones_like", "empty",
    "empty_like", "full", "full_like", "arange", "eye", "scalar_tensor", "_to_copy", "new_zeros", "new_ones",
    "new_empty", "new_full", "as_strided", "diagonal", "unfold", "movedim", "channel_shuffle", "nonzero",
}
_MATMUL_INNER = {  # op -> (position of the left operand, position of the right operand)
    "mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "_addmm_activation": (1, 2), "baddbmm": (1, 2),
    "mv": (0, 1), "addmv": (1, 2), "dot": (0, 1), "vdot": (0, 1), "addbmm": (1, 2),
}
_ATTENTION = {"_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
              "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
              "_scaled_dot_product_fused_attention_overrideable"}
_ALONG_DIM = {"_softmax", "_log_softmax", "_safe_softmax", "cumsum", "cumsum_", "cumprod", "logcumsumexp"}
_POOL_WINDOW = {"avg_pool1d", "avg_pool2d", "avg_pool3d"}                  # args[1]: the window
# Transcendental functions are not correctly rounded: libm, SLEEF and CUDA's accurate functions stay within
# about 2 ulp (4 u32), and two implementations (the reference's, the solution's) differ by up to twice that.
# An error of half-width 4 u has the variance proxy of 16 roundings, so each such op counts as 16 (K).
TRANSCENDENTAL_ROUNDINGS = 16
_TRANSCENDENTAL = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sigmoid", "erf", "erfc", "erfinv", "gelu",
    "silu", "mish", "softplus", "elu", "selu", "celu", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "rsqrt", "log_sigmoid_forward", "lgamma", "digamma",
    "logit", "xlogy", "special_xlog1py", "logaddexp", "logsumexp",
}
_EXP_ALONG_DIM = {"_softmax", "_log_softmax", "_safe_softmax", "logcumsumexp"}  # an exp per element as well
_INTERPOLATION_TAPS = {"upsample_linear1d": 2, "upsample_bilinear2d": 4, "upsample_trilinear3d": 8,
                       "upsample_bicubic2d": 16, "_upsample_bilinear2d_aa": 4, "grid_sampler_2d": 4}


_SCATTER_SUMS = {"index_add", "index_add_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_",
                 "index_reduce", "index_reduce_", "_embedding_bag", "_embedding_bag_forward_only"}


def _scatter_terms(name: str, args: tuple[Any, ...]) -> int:
    """The most terms any one output element receives: counted from the indices on real tensors, the
    average (rounded up) on meta tensors, which carry no values."""
    if name.startswith("_embedding_bag"):
        indices, offsets = args[1], args[2]
        if indices.is_meta or offsets.numel() == 0:
            return -(-_numel(indices) // max(_numel(offsets), 1))
        ends = torch.cat([offsets[1:], offsets.new_tensor([indices.numel()])])
        return max(1, int((ends - offsets).max()))
    target, dim, index = args[0], int(args[1]), args[2]
    if index.is_meta:
        source = args[3]
        return -(-_numel(source) // max(_numel(target), 1)) if name.startswith("scatter") else \
            -(-int(source.shape[dim] if source.dim() else 1) // max(int(target.shape[dim]) if target.dim() else 1, 1))
    if name.startswith("index"):
        return max(1, int(torch.bincount(index.reshape(-1).long().cpu()).max())) if index.numel() else 1
    counts = torch.zeros(target.shape, dtype=torch.int64, device=target.device)
    counts.scatter_add_(dim, index.long(), torch.ones(index.shape, dtype=torch.int64, device=target.device))
    return max(1, int(counts.max())) if counts.numel() else 1


def _numel(t: Any) -> int:
    return int(t.numel()) if isinstance(t, torch.Tensor) else 1


def op_cost(name: str, args: tuple[Any, ...], out: Any) -> tuple[int, int, int]:
    """(roundings, matmul stages, rounding ops) one call adds to each output element's chain."""
    if name in _EXACT:
        return 0, 0, 0
    if name in _MATMUL_INNER:
        left, right = _MATMUL_INNER[name]
        inner = int(args[left].shape[-1])
        if name == "addbmm":
            inner *= int(args[left].shape[0])
        return inner, 1, 1
    if name in ("convolution", "_convolution"):
        weight, transposed, groups = args[1], bool(args[6]), int(args[8])
        kernel = math.prod(int(s) for s in weight.shape[2:])
        channels = int(weight.shape[0]) // groups if transposed else int(weight.shape[1])
        return channels * kernel, 1, 1
    if name in _ATTENTION:
        # scores over the head dimension, the softmax sum and the weighted sum over the keys
        head_dim, keys = int(args[0].shape[-1]), int(args[1].shape[-2])
        return head_dim + 2 * keys, 2, 3
    if name == "mkldnn_rnn_layer":
        # one matmul stage per time step, each summing input and hidden features
        x, hidden, batch_first = args[0], int(args[10]), bool(args[14])
        steps = int(x.shape[1] if batch_first else x.shape[0])
        return steps * (int(x.shape[-1]) + hidden + 1), steps, steps * 3
    if name in _ALONG_DIM:
        x, dim = args[0], int(args[1])
        extra = TRANSCENDENTAL_ROUNDINGS if name in _EXP_ALONG_DIM else 1
        return int(x.shape[dim]) + extra if x.dim() else extra, 0, 1
    if name in _POOL_WINDOW:
        window = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
        return math.prod(int(w) for w in window) or 1, 0, 1
    if name in _INTERPOLATION_TAPS:
        return _INTERPOLATION_TAPS[name], 0, 1
    if name == "native_layer_norm":
        return math.prod(int(s) for s in args[1]) + 2, 0, 1
    if name == "native_group_norm":
        channels, hw, groups = int(args[4]), int(args[5]), int(args[6])
        return channels // max(groups, 1) * hw + 2, 0, 1
    if name in ("native_batch_norm", "_native_batch_norm_legit") and len(args) > 5 and bool(args[5]):
        x = args[0]
        return _numel(x) // max(int(x.shape[1]), 1) + 2, 0, 1
    if name in _SCATTER_SUMS:
        return _scatter_terms(name, args) + 1, 0, 1
    if name.startswith("_fft"):
        return max(1, math.ceil(math.log2(max(_numel(args[0]), 2)))), 0, 1
    # anything else: an elementwise op rounds once (a transcendental one counts more); a reduction sums
    # inputs-per-output terms
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)
    largest_out = max((_numel(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor)), default=1)
    terms = _numel(first) // max(largest_out, 1) if first is not None else 1
    own = TRANSCENDENTAL_ROUNDINGS if name.rstrip("_") in _TRANSCENDENTAL else 1
    return max(own, terms + own - 1), 0, 1


class ChainCounter(UncompiledMode):
    """Follows (K, D, E) through every tensor the forward makes (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.chains: WeakTensorKeyDictionary = WeakTensorKeyDictionary()

    def chain(self, t: torch.Tensor) -> tuple[int, int, int]:
        return self.chains.get(t, (0, 0, 0))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        before = [self.chain(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        k0, d0, e0 = (max(c[i] for c in before) for i in range(3)) if before else (0, 0, 0)
        name = func.overloadpacket.__name__
        k, d, e = op_cost(name, tuple(args), out)
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.chains[t] = (k0 + k, d0 + d, e0 + e)
        return out


def arithmetic_profile(model: torch.nn.Module, inputs: list[Any], flops: bool = True) -> dict[str, Any]:
    """One forward of `model(*inputs)`, counted. Returns the keyword arguments compare_outputs takes
    (reduction_length, matmul_stages, op_stages) plus output_elements and, with `flops` (torch's FLOP
    counter, whose first use imports torch._dynamo: the judge leaves it out), flops and
    flops_reduction_length."""
    counter = ChainCounter()
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        if flops:
            from torch.utils.flop_counter import FlopCounterMode

            flop_counter = stack.enter_context(FlopCounterMode(display=False))
        stack.enter_context(counter)
        out = model(*inputs)
    tensors = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    chains = [counter.chain(t) for t in tensors] or [(0, 0, 0)]
    elements = sum(int(t.numel()) for t in tensors)
    found = {
        "reduction_length": max(1, max(c[0] for c in chains)),
        "matmul_stages": max(c[1] for c in chains),
        "op_stages": max(1, max(c[2] for c in chains)),
        "output_elements": elements,
    }
    if flops:
        total = int(flop_counter.get_total_flops())
        found.update(flops=total, flops_reduction_length=max(1, round(total / (2 * elements))) if elements else None)
    return found
