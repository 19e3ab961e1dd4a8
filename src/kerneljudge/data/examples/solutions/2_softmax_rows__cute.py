# expect: correct
# needs: cuda,cute
# problem: 2_softmax_rows.py
# why: CuTe DSL kernel (@cute.kernel launched from a @cute.jit host function, cute.compile once, dynamic layouts), one warp per row: an online pass (running max and rescaled sum of exp per lane), butterfly shuffles for the row's max and sum, then the write; torch memory through from_dlpack, launched on the caller's torch stream
import cuda.bindings.driver as cuda_driver
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

WARPS = 4   # rows per block: one warp per row


def warp_max(v):
    # butterfly: every lane ends with the max over the warp
    for offset in (16, 8, 4, 2, 1):
        v = cute.arch.fmax(v, cute.arch.shuffle_sync_bfly(v, offset=offset))
    return v


def warp_sum(v):
    for offset in (16, 8, 4, 2, 1):
        v = v + cute.arch.shuffle_sync_bfly(v, offset=offset)
    return v


@cute.kernel
def softmax_rows_kernel(mX: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32, cols: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    lane = tidx % 32
    row = bidx * WARPS + tidx // 32
    if row < rows:
        # the running max starts at the row's first element (every row has one), so no -inf is needed
        m = mX[row, 0]
        s = cutlass.Float32(0.0)
        for c in range(lane, cols, 32):
            v = mX[row, c]
            m_new = cute.arch.fmax(m, v)
            s = s * cute.math.exp(m - m_new) + cute.math.exp(v - m_new)
            m = m_new
        row_max = warp_max(m)
        row_sum = warp_sum(s * cute.math.exp(m - row_max))
        inv = cutlass.Float32(1.0) / row_sum
        for c in range(lane, cols, 32):
            mOut[row, c] = cute.math.exp(mX[row, c] - row_max) * inv


@cute.jit
def softmax_rows(mX: cute.Tensor, mOut: cute.Tensor, rows: cutlass.Int32, cols: cutlass.Int32,
                 stream: cuda_driver.CUstream):
    blocks = (rows + WARPS - 1) // WARPS
    softmax_rows_kernel(mX, mOut, rows, cols).launch(grid=[blocks, 1, 1], block=[WARPS * 32, 1, 1], stream=stream)


_COMPILED = {}   # the compiled host function, built on the first call (its layouts are dynamic: any shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows, cols = x.shape
        if x.numel() >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        args = (from_dlpack(x).mark_layout_dynamic(leading_dim=1), from_dlpack(out).mark_layout_dynamic(leading_dim=1),
                rows, cols, cuda_driver.CUstream(torch.cuda.current_stream(x.device).cuda_stream))
        if "softmax_rows" not in _COMPILED:
            _COMPILED["softmax_rows"] = cute.compile(softmax_rows, *args)
        _COMPILED["softmax_rows"](*args)
        return out
