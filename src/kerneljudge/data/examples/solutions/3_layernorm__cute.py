# expect: correct
# needs: cuda,cute
# problem: 3_layernorm.py
# why: CuTe DSL kernel (@cute.kernel launched from a @cute.jit host function, cute.compile once, dynamic layouts), one warp per row: two-pass mean and variance with butterfly shuffles, then the affine write; torch memory through from_dlpack, launched on the caller's torch stream
import cuda.bindings.driver as cuda_driver
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

WARPS = 4   # rows per block: one warp per row


def warp_sum(v):
    # butterfly: every lane ends with the sum over the warp
    for offset in (16, 8, 4, 2, 1):
        v = v + cute.arch.shuffle_sync_bfly(v, offset=offset)
    return v


@cute.kernel
def layer_norm_kernel(mX: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32,
                      cols: cutlass.Int32, inv_cols: cutlass.Float32, eps: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    lane = tidx % 32
    row = bidx * WARPS + tidx // 32
    if row < rows:
        acc = cutlass.Float32(0.0)
        for c in range(lane, cols, 32):
            acc = acc + mX[row, c]
        mean = warp_sum(acc) * inv_cols
        sq = cutlass.Float32(0.0)
        for c in range(lane, cols, 32):
            d = mX[row, c] - mean
            sq = sq + d * d
        rstd = cute.math.rsqrt(warp_sum(sq) * inv_cols + eps)
        for c in range(lane, cols, 32):
            mOut[row, c] = (mX[row, c] - mean) * rstd * mW[c] + mB[c]


@cute.jit
def layer_norm(mX: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32,
               cols: cutlass.Int32, inv_cols: cutlass.Float32, eps: cutlass.Float32, stream: cuda_driver.CUstream):
    blocks = (rows + WARPS - 1) // WARPS
    layer_norm_kernel(mX, mW, mB, mOut, rows, cols, inv_cols, eps).launch(
        grid=[blocks, 1, 1], block=[WARPS * 32, 1, 1], stream=stream)


_COMPILED = {}   # the compiled host function, built on the first call (its layouts are dynamic: any shape)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()   # DLPack does not export tensors that require grad
        bias = self.bias.detach().contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows, cols = x.shape
        if x.numel() >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        args = (from_dlpack(x).mark_layout_dynamic(leading_dim=1), from_dlpack(weight).mark_layout_dynamic(leading_dim=0),
                from_dlpack(bias).mark_layout_dynamic(leading_dim=0), from_dlpack(out).mark_layout_dynamic(leading_dim=1),
                rows, cols, 1.0 / cols, float(self.eps),
                cuda_driver.CUstream(torch.cuda.current_stream(x.device).cuda_stream))
        if "layer_norm" not in _COMPILED:
            _COMPILED["layer_norm"] = cute.compile(layer_norm, *args)
        _COMPILED["layer_norm"](*args)
        return out
