"""Reduced-precision variants of a reference computation, for calibrating and testing the numerics classes.

Each variant runs a model's own forward with one change of arithmetic, the way a solution might:
  tf32           operands of every matmul-like op rounded to a 10-bit mantissa (round to nearest even),
                 fp32 accumulation; on a GPU, torch's own TF32 switches instead (real tensor cores)
  tf32_truncate  the same operands truncated to a 10-bit mantissa (round toward zero), what tensor cores
                 do with fp32 registers they read as TF32 (Triton's tl.dot default)
  fp16_operands  the same operands cast to fp16 and back (fp16 tensor-core inputs, fp32 accumulation)
  bf16_operands  the same with bf16
  tanh_gelu      every exact GELU computed in its tanh form
  bf16_results   the result of every op that rounds (all but data movement) rounded to bf16: a kernel that
                 computes in bf16 where no TF32 path exists (elementwise ops, reductions, norms)
and two honest fp32 controls:
  split_k        every matmul-like reduction split in two halves added afterwards (another summation order)
  fp64           the whole forward in float64, rounded to fp32 at the end (a more accurate kernel)
The tf32 floor (worker/tf32_floor.py) runs "tf32_floor": tf32_truncate and tanh_gelu at once, the coarsest
arithmetic the tf32 class admits. "Matmul-like" ops are those TF32 applies to on a GPU: mm, addmm, bmm,
baddbmm, mv, dot, convolution, and the input and weights of the CPU LSTM layer. Attention runs through
PyTorch's math backend under a variant, so its two products are matmuls too. Used by
scripts/calibrate_numerics.py, the tests and, for the reference's own TF32 error (worker/tf32_floor.py), the
reference process; no solution code runs here.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch

from kerneljudge.numerics.dispatch_mode import UncompiledMode

aten = torch.ops.aten

VARIANTS = ("tf32", "tf32_truncate", "fp16_operands", "bf16_operands", "tanh_gelu", "bf16_results", "split_k", "fp64")

# op -> positions of the operands a tensor core would read in reduced precision
OPERANDS: dict[Any, tuple[int, ...]] = {
    aten.mm.default: (0, 1),
    aten.addmm.default: (1, 2),
    aten._addmm_activation.default: (1, 2),
    aten.bmm.default: (0, 1),
    aten.baddbmm.default: (1, 2),
    aten.addbmm.default: (1, 2),
    aten.mv.default: (0, 1),
    aten.addmv.default: (1, 2),
    aten.dot.default: (0, 1),
    aten.convolution.default: (0, 1),
    aten._convolution.default: (0, 1),
    aten.mkldnn_rnn_layer.default: (0, 1, 2),
    aten._cudnn_rnn.default: (0, 1, 3),      # the input, the weight list and cuDNN's flat weight buffer
}
_TF32_DROPPED_BITS = 13          # fp32 has 23 explicit mantissa bits, TF32 keeps 10


def round_to_tf32(t: torch.Tensor) -> torch.Tensor:
    """Round fp32 values to the nearest value with a 10-bit mantissa (ties to even); NaN/Inf kept."""
    if t.dtype != torch.float32:
        return t
    bits = t.contiguous().view(torch.int32)
    keep_lsb = (bits >> _TF32_DROPPED_BITS) & 1
    half = (1 << (_TF32_DROPPED_BITS - 1)) - 1
    rounded = (bits + half + keep_lsb) & ~((1 << _TF32_DROPPED_BITS) - 1)
    return torch.where(torch.isfinite(t), rounded.view(torch.float32), t).view(t.shape)


def truncate_to_tf32(t: torch.Tensor) -> torch.Tensor:
    """Drop the 13 low mantissa bits of fp32 values (round toward zero to a 10-bit mantissa)."""
    if t.dtype != torch.float32:
        return t
    bits = t.contiguous().view(torch.int32) & ~((1 << _TF32_DROPPED_BITS) - 1)
    return torch.where(torch.isfinite(t), bits.view(torch.float32), t).view(t.shape)


def _cast_through(dtype: torch.dtype) -> Callable[[torch.Tensor], torch.Tensor]:
    def cast(t: torch.Tensor) -> torch.Tensor:
        return t.to(dtype).to(t.dtype) if t.dtype == torch.float32 else t
    return cast


ROUNDING: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tf32": round_to_tf32,
    "tf32_truncate": truncate_to_tf32,
    "fp16_operands": _cast_through(torch.float16),
    "bf16_operands": _cast_through(torch.bfloat16),
}


class OperandRounding(UncompiledMode):
    """Round the operands of matmul-like ops (see OPERANDS); count how many calls it changed."""

    def __init__(self, rounding: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.rounding = rounding
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        positions = OPERANDS.get(func)
        if positions is not None:
            args = list(args)
            for i in positions:
                args[i] = self._rounded(args[i])
            self.calls += 1
        return func(*args, **kwargs)


    def _rounded(self, arg: Any) -> Any:
        if isinstance(arg, torch.Tensor) and arg.is_floating_point():
            return self.rounding(arg)
        if isinstance(arg, (list, tuple)):   # a list of weights (a recurrent network's)
            return type(arg)(self._rounded(a) for a in arg)
        return arg


class TanhGelu(UncompiledMode):
    """Every exact GELU computed as 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in (aten.gelu.default, aten.gelu_.default) and kwargs.get("approximate", "none") == "none":
            kwargs["approximate"] = "tanh"
            self.calls += 1
        return func(*args, **kwargs)


class Bf16Results(UncompiledMode):
    """The fp32 result of every op that rounds rounded to bf16 (ops arithmetic.py counts as exact keep theirs)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        from kerneljudge.numerics.arithmetic import EXACT_OPS

        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in EXACT_OPS or not isinstance(out, torch.Tensor):
            return out
        if out.dtype != torch.float32:
            return out
        self.calls += 1
        return out.to(torch.bfloat16).to(torch.float32)


class SplitK(UncompiledMode):
    """Another fp32 summation order: each matmul-like reduction computed as two halves, then added."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        split = _SPLITTERS.get(func)
        if split is not None:
            out = split(*args, **kwargs)
            if out is not None:
                self.calls += 1
                return out
        return func(*args, **kwargs)


def _split_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor | None:
    k = a.shape[-1]
    if k < 2 or not a.is_floating_point():
        return None
    h = k // 2
    return torch.matmul(a[..., :h], b[..., :h, :]) + torch.matmul(a[..., h:], b[..., h:, :])


def _split_addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, beta: Any = 1, alpha: Any = 1) -> Any:
    product = _split_mm(a, b)
    return None if product is None else beta * bias + alpha * product


def _split_conv(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, stride: Any, padding: Any,
                dilation: Any, transposed: bool, output_padding: Any, groups: int, *rest: Any) -> Any:
    # a convolution is a sum over input channels: two halves of them, where the channels allow it
    channels = w.shape[1] if not transposed else w.shape[0]
    if groups != 1 or channels < 2 or not x.is_floating_point():
        return None
    h = channels // 2
    wa, wb = (w[:, :h], w[:, h:]) if not transposed else (w[:h], w[h:])
    first = aten.convolution.default(x[:, :h], wa, None, stride, padding, dilation, transposed, output_padding, 1)
    second = aten.convolution.default(x[:, h:], wb, bias, stride, padding, dilation, transposed, output_padding, 1)
    return first + second


_SPLITTERS: dict[Any, Callable[..., Any]] = {
    aten.mm.default: _split_mm,
    aten.bmm.default: _split_mm,
    aten.addmm.default: _split_addmm,
    aten.baddbmm.default: _split_addmm,
    aten.convolution.default: _split_conv,
}


@contextlib.contextmanager
def running_as(variant: str, device: str = "cpu") -> Iterator[dict[str, int]]:
    """Run the enclosed forward as `variant`; yields a dict whose "calls" (ops changed) is filled on exit.

    "fp64" is not a mode: see as_fp64.
    """
    found = {"calls": 0}
    if variant == "tf32" and device == "cuda":
        with _cuda_tf32():
            yield found
        found["calls"] = -1   # unknown: the GPU libraries decide where TF32 applies
        return
    if variant in ROUNDING:
        mode: Any = OperandRounding(ROUNDING[variant])
    elif variant == "tanh_gelu":
        mode = TanhGelu()
    elif variant == "tf32_floor":
        with _math_attention(), OperandRounding(truncate_to_tf32) as operands, TanhGelu() as gelu:
            yield found
        found["calls"] = operands.calls + gelu.calls
        return
    elif variant == "bf16_results":
        mode = Bf16Results()
    elif variant == "split_k":
        mode = SplitK()
    else:
        raise ValueError(f"no mode for variant {variant!r}; choose from {', '.join(VARIANTS[:-1])}")
    with _math_attention(), mode:
        yield found
    found["calls"] = mode.calls


@contextlib.contextmanager
def _math_attention() -> Iterator[None]:
    """Attention through its matmuls (the math backend), and no fused multi-head attention fast path."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with sdpa_kernel([SDPBackend.MATH]):
            yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


@contextlib.contextmanager
def _cuda_tf32() -> Iterator[None]:
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def as_fp64(model: torch.nn.Module, inputs: list[Any]) -> tuple[torch.nn.Module, list[Any]]:
    """A float64 copy of the model and of its floating inputs (for the fp64 control)."""
    import copy

    twin = copy.deepcopy(model).to(torch.float64)
    return twin, [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                  for x in inputs]
