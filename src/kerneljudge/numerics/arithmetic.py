"""What the numerics bounds need to know about a problem's arithmetic: one forward of the reference, counted.

For every tensor the forward makes, five counts along the longest chain of operations that led to it:
  reduction_length       K: the variance proxy of the chain's fp32 roundings, in roundings. An elementwise op
                         is one, a transcendental function (exp, erf, tanh, ...) TRANSCENDENTAL_ROUNDINGS, a sum
                         of n terms reduction_chain(n) (n while a thread may sum it alone; longer sums as GPU
                         kernels compute them, in blocks: see reduction_chain), a matmul or convolution the chain
                         of its inner sum.
  worst_case_roundings   W: the largest error the chain's roundings can make, in units of u32, one computation:
                         WORST_OP per elementwise op (2 ulp: IEEE ops, fast-math division and square root),
                         WORST_TRANSCENDENTAL per transcendental function, WORST_OP per term of a sum. Bounds
                         never exceed it: a bounded error cannot exceed its bound, whatever a tail estimate says.
  matmul_stages          D: matmul-like ops on the chain (those whose operands TF32 / tensor cores round; a
                         recurrent layer counts one per time step, on the CPU and in cuDNN).
  op_stages              E: ops on the chain that round their result (every op but pure data movement).
  transcendental_stages  T: transcendental functions on the chain (where fast approximations may enter).
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
from typing import Any, Callable, NamedTuple

import torch
from torch.utils._pytree import tree_leaves
from torch.utils.weak import WeakTensorKeyDictionary

from kerneljudge.numerics.dispatch_mode import UncompiledMode

aten = torch.ops.aten

# ops that move or select data without rounding anything
EXACT_OPS = {
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
# Worst cases (W), in u32 per computation: an IEEE op errs by at most 1 u, fast-math division, reciprocal and
# square root (--use_fast_math, Triton's defaults) by 2 ulp = 4 u; CUDA's accurate transcendental functions by
# up to 4 ulp (powf, tanf, erfcf), Triton's and fast-math exp by 2 + 1.17|x| ulp: 8 ulp = 16 u covers |x| < 5
# (beyond, the tf32 class's allowance for approximate transcendentals takes over).
WORST_OP = 4
WORST_TRANSCENDENTAL = 16
# Long sums as GPU kernels compute them: up to SEQUENTIAL_TERMS a thread may add every term itself (one thread
# per output row is a common honest kernel); beyond, the terms are summed in blocks of at least BLOCK_TERMS
# (a block's threads, reduced in shared memory or by warp shuffles) whose partial sums are then added one after
# another (atomics into the output: the longest honest chain), so the chain grows by one rounding per block.
SEQUENTIAL_TERMS = 1 << 16
BLOCK_TERMS = 256
_TRANSCENDENTAL = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sigmoid", "erf", "erfc", "erfinv", "gelu",
    "silu", "mish", "softplus", "elu", "selu", "celu", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "rsqrt", "log_sigmoid_forward", "lgamma", "digamma",
    "logit", "xlogy", "special_xlog1py", "logaddexp", "logsumexp",
}
_EXP_ALONG_DIM = {"_softmax", "_log_softmax", "_safe_softmax", "logcumsumexp"}  # an exp per element as well
_INTERPOLATION_TAPS = {"upsample_linear1d": 2, "upsample_bilinear2d": 4, "upsample_trilinear3d": 8,
                       "upsample_bicubic2d": 16, "_upsample_bilinear2d_aa": 4, "grid_sampler_2d": 4}


def reduction_chain(terms: int) -> int:
    """Roundings along the longest chain of an honest sum of `terms` terms (see SEQUENTIAL_TERMS)."""
    terms = max(1, int(terms))
    if terms <= SEQUENTIAL_TERMS:
        return terms
    return SEQUENTIAL_TERMS + -(-(terms - SEQUENTIAL_TERMS) // BLOCK_TERMS)


class Cost(NamedTuple):
    """What one op adds to each output element's chain (the counts of the module docstring)."""
    roundings: int = 0         # K
    worst: int = 0             # W
    matmul: int = 0            # D
    ops: int = 0               # E
    transcendental: int = 0    # T


EXACT = Cost()


def _sum_of(terms: int, transcendental: int = 0, extra: int = 0) -> Cost:
    """A reduction of `terms` terms (after `transcendental` functions per term and `extra` more roundings)."""
    chain = reduction_chain(terms) + extra
    return Cost(chain + transcendental * TRANSCENDENTAL_ROUNDINGS,
                WORST_OP * chain + transcendental * WORST_TRANSCENDENTAL, 0, 1, transcendental)


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


def op_cost(name: str, args: tuple[Any, ...], out: Any) -> Cost:
    """What one call adds to each output element's chain."""
    if name in EXACT_OPS:
        return EXACT
    if name in _MATMUL_INNER:
        left, right = _MATMUL_INNER[name]
        inner = int(args[left].shape[-1])
        if name == "addbmm":
            inner *= int(args[left].shape[0])
        return _matmul(inner)
    if name in ("convolution", "_convolution"):
        weight, transposed, groups = args[1], bool(args[6]), int(args[8])
        kernel = math.prod(int(s) for s in weight.shape[2:])
        channels = int(weight.shape[0]) // groups if transposed else int(weight.shape[1])
        return _matmul(channels * kernel)
    if name in _ATTENTION:
        # scores over the head dimension, the softmax (an exp and a sum over the keys) and the weighted sum
        head_dim, keys = int(args[0].shape[-1]), int(args[1].shape[-2])
        chain = reduction_chain(head_dim) + 2 * reduction_chain(keys)
        return Cost(chain + TRANSCENDENTAL_ROUNDINGS, WORST_OP * chain + WORST_TRANSCENDENTAL, 2, 3, 1)
    if name == "mkldnn_rnn_layer":
        # one matmul stage per time step, each summing input and hidden features, then its gates
        x, hidden, batch_first = args[0], int(args[10]), bool(args[14])
        steps = int(x.shape[1] if batch_first else x.shape[0])
        chain = steps * (reduction_chain(int(x.shape[-1]) + hidden) + 1)
        return Cost(chain + steps * TRANSCENDENTAL_ROUNDINGS, WORST_OP * chain + steps * WORST_TRANSCENDENTAL,
                    steps, steps * 3, steps)
    if name == "_cudnn_rnn":
        return _cudnn_rnn_cost(args)
    if name in _ALONG_DIM:
        x, dim = args[0], int(args[1])
        return _sum_of(int(x.shape[dim]) if x.dim() else 1, 1 if name in _EXP_ALONG_DIM else 0)
    if name in _POOL_WINDOW:
        window = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
        return _sum_of(math.prod(int(w) for w in window) or 1)
    if name in _INTERPOLATION_TAPS:
        return _sum_of(_INTERPOLATION_TAPS[name])
    if name in _NORMS:
        extent = _NORMS[name](args)
        if extent is not None:   # the mean, the variance and a reciprocal square root: accurate to a few ulp
            chain = reduction_chain(extent) + 2
            return Cost(chain + TRANSCENDENTAL_ROUNDINGS, WORST_OP * chain + WORST_TRANSCENDENTAL, 0, 1, 0)
    if name in _SCATTER_SUMS:
        return _sum_of(_scatter_terms(name, args) + 1)
    if name.startswith("_fft"):
        depth = max(1, math.ceil(math.log2(max(_numel(args[0]), 2))))
        return Cost(depth, WORST_OP * depth, 0, 1, 0)
    # anything else: an elementwise op rounds once (a transcendental one counts more); a reduction sums
    # inputs-per-output terms
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)
    largest_out = max((_numel(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor)), default=1)
    terms = _numel(first) // max(largest_out, 1) if first is not None else 1
    transcendental = 1 if name.rstrip("_") in _TRANSCENDENTAL else 0
    if terms > 1:
        return _sum_of(terms, transcendental)
    if transcendental:
        return Cost(TRANSCENDENTAL_ROUNDINGS, WORST_TRANSCENDENTAL, 0, 1, 1)
    return Cost(1, WORST_OP, 0, 1, 0)


def _cudnn_rnn_cost(args: tuple[Any, ...]) -> Cost:
    """cuDNN's whole recurrent network in one call: per layer and time step a matmul stage over the input and
    hidden features, then the gates (transcendental)."""
    x, hidden, layers = args[0], int(args[7]), int(args[9])
    batch_first, bidirectional, batch_sizes = bool(args[10]), bool(args[13]), args[14]
    if x.dim() == 3:
        steps = int(x.shape[1] if batch_first else x.shape[0])
    else:   # a packed sequence: one batch size per time step
        steps = max(1, len(batch_sizes))
    width = max(int(x.shape[-1]), hidden * (2 if bidirectional else 1))
    stages = steps * layers
    chain = stages * (reduction_chain(width + hidden) + 1)
    return Cost(chain + stages * TRANSCENDENTAL_ROUNDINGS, WORST_OP * chain + stages * WORST_TRANSCENDENTAL,
                stages, 3 * stages, stages)


def _matmul(inner: int) -> Cost:
    chain = reduction_chain(inner)
    return Cost(chain, WORST_OP * chain, 1, 1, 0)


def _layer_norm_extent(args: tuple[Any, ...]) -> int:
    return math.prod(int(s) for s in args[1])


def _group_norm_extent(args: tuple[Any, ...]) -> int:
    channels, hw, groups = int(args[4]), int(args[5]), int(args[6])
    return channels // max(groups, 1) * hw


def _batch_norm_extent(args: tuple[Any, ...]) -> int | None:
    if len(args) <= 5 or not bool(args[5]):   # eval mode: running statistics, an elementwise affine map
        return None
    x = args[0]
    return _numel(x) // max(int(x.shape[1]), 1)


_NORMS: dict[str, Callable[[tuple[Any, ...]], int | None]] = {
    "native_layer_norm": _layer_norm_extent, "native_group_norm": _group_norm_extent,
    "native_batch_norm": _batch_norm_extent, "_native_batch_norm_legit": _batch_norm_extent,
}


class ChainCounter(UncompiledMode):
    """Follows the chain counts (a Cost) through every tensor the forward makes (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.chains: WeakTensorKeyDictionary = WeakTensorKeyDictionary()

    def chain(self, t: torch.Tensor) -> Cost:
        return self.chains.get(t, EXACT)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        before = [self.chain(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        longest = Cost(*(max(c[i] for c in before) for i in range(len(EXACT)))) if before else EXACT
        own = op_cost(func.overloadpacket.__name__, tuple(args), out)
        after = Cost(*(a + b for a, b in zip(longest, own)))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.chains[t] = after
        return out


def arithmetic_profile(model: torch.nn.Module, inputs: list[Any], flops: bool = True) -> dict[str, Any]:
    """One forward of `model(*inputs)`, counted. Returns the counts compare_outputs takes (numerics.
    WORKLOAD_KEYS: reduction_length, worst_case_roundings, matmul_stages, op_stages, transcendental_stages)
    plus output_elements and, with `flops` (torch's FLOP counter, whose first use imports torch._dynamo: the
    judge leaves it out), flops and flops_reduction_length."""
    counter = ChainCounter()
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        if flops:
            from torch.utils.flop_counter import FlopCounterMode

            flop_counter = stack.enter_context(FlopCounterMode(display=False))
        stack.enter_context(counter)
        out = model(*inputs)
    tensors = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    chains = [counter.chain(t) for t in tensors] or [EXACT]
    elements = sum(int(t.numel()) for t in tensors)
    found = {
        "reduction_length": max(1, max(c.roundings for c in chains)),
        "worst_case_roundings": max(1, max(c.worst for c in chains)),
        "matmul_stages": max(c.matmul for c in chains),
        "op_stages": max(1, max(c.ops for c in chains)),
        "transcendental_stages": max(c.transcendental for c in chains),
        "output_elements": elements,
    }
    if flops:
        total = int(flop_counter.get_total_flops())
        found.update(flops=total, flops_reduction_length=max(1, round(total / (2 * elements))) if elements else None)
    return found
