import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

WARPS = 4   # rows per block: one warp per row


@cute.kernel
def rms_norm_kernel(mX: cute.Tensor, mW: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32, cols: cutlass.Int32,
                    inv_cols: cutlass.Float32, eps: cutlass.Float32):
    # One warp per row: each lane sums the squares of a strided slice of the row (adjacent lanes read adjacent
    # elements), a butterfly of shuffles gives every lane the row's total, and each lane scales its slice.
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    lane = tidx % 32
    row = bidx * WARPS + tidx // 32
    if row < rows:
        acc = cutlass.Float32(0.0)
        for c in range(lane, cols, 32):
            v = mX[row, c]
            acc = acc + v * v
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=16)
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=8)
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=4)
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=2)
        acc = acc + cute.arch.shuffle_sync_bfly(acc, offset=1)
        scale = cute.math.rsqrt(acc * inv_cols + eps)
        for c in range(lane, cols, 32):
            mOut[row, c] = mX[row, c] * scale * mW[c]


@cute.jit
def rms_norm(mX: cute.Tensor, mW: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32, cols: cutlass.Int32,
             inv_cols: cutlass.Float32, eps: cutlass.Float32, stream: cuda.CUstream):
    blocks = (rows + WARPS - 1) // WARPS
    rms_norm_kernel(mX, mW, mOut, rows, cols, inv_cols, eps).launch(
        grid=[blocks, 1, 1], block=[WARPS * 32, 1, 1], stream=stream)


compiled = {}   # the compiled host function, built on the first call (its layouts are dynamic: any shape)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        # same name and shape as Model's parameter, so it receives the reference's values
        self.weight = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        if x.dtype != torch.float32 or self.weight.dtype != torch.float32:
            raise TypeError("inputs must be float32")
        cols = x.shape[-1]
        rows = x.reshape(-1, cols).contiguous()
        out = torch.empty_like(rows)
        n_rows = rows.shape[0]
        if n_rows == 0 or cols == 0:
            return out.reshape(x.shape)
        if n_rows * cols >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        weight = self.weight.detach().contiguous()   # DLPack does not export tensors that require grad
        args = (from_dlpack(rows).mark_layout_dynamic(leading_dim=1),
                from_dlpack(weight).mark_layout_dynamic(leading_dim=0),
                from_dlpack(out).mark_layout_dynamic(leading_dim=1),
                n_rows, cols, 1.0 / cols, float(self.eps), cuda.CUstream(torch.cuda.current_stream().cuda_stream))
        if "rms_norm" not in compiled:
            compiled["rms_norm"] = cute.compile(rms_norm, *args)
        compiled["rms_norm"](*args)
        return out.reshape(x.shape)
