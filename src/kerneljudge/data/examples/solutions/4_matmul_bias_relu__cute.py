# expect: correct
# needs: cuda,cute
# problem: 4_matmul_bias_relu.py
# why: CuTe DSL kernel (@cute.kernel launched from a @cute.jit host function, cute.compile once, dynamic layouts), one warp per 2x4 block of outputs with its lanes striding over K (coalesced reads of x and weight rows), butterfly shuffles for the dot products, bias and ReLU fused into the store; full fp32; torch memory through from_dlpack, launched on the caller's torch stream
import math

import cuda.bindings.driver as cuda_driver
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

WARP_ROWS = 2         # outputs per warp: 2 rows of x times 4 rows of weight
WARP_COLS = 4
BLOCK_WARPS_M = 2     # warps per block: 2 along M times 4 along N, so a block covers 4 x 16 outputs
BLOCK_WARPS_N = 4
BLOCK_M = WARP_ROWS * BLOCK_WARPS_M
BLOCK_N = WARP_COLS * BLOCK_WARPS_N


def warp_sum(v):
    # butterfly: every lane ends with the sum over the warp
    for offset in (16, 8, 4, 2, 1):
        v = v + cute.arch.shuffle_sync_bfly(v, offset=offset)
    return v


@cute.kernel
def matmul_bias_relu_kernel(mX: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mOut: cute.Tensor,
                            M: cutlass.Int32, N: cutlass.Int32, K: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    lane = tidx % 32
    warp = tidx // 32
    m0 = bidy * BLOCK_M + (warp // BLOCK_WARPS_N) * WARP_ROWS
    n0 = bidx * BLOCK_N + (warp % BLOCK_WARPS_N) * WARP_COLS
    # rows past the edge read a valid row (taken modulo the size) and are never stored: no branch in the K loop
    r0 = m0 % M
    r1 = (m0 + 1) % M
    c0 = n0 % N
    c1 = (n0 + 1) % N
    c2 = (n0 + 2) % N
    c3 = (n0 + 3) % N
    a00 = cutlass.Float32(0.0)
    a01 = cutlass.Float32(0.0)
    a02 = cutlass.Float32(0.0)
    a03 = cutlass.Float32(0.0)
    a10 = cutlass.Float32(0.0)
    a11 = cutlass.Float32(0.0)
    a12 = cutlass.Float32(0.0)
    a13 = cutlass.Float32(0.0)
    for k in range(lane, K, 32):
        x0 = mX[r0, k]
        x1 = mX[r1, k]
        w0 = mW[c0, k]
        w1 = mW[c1, k]
        w2 = mW[c2, k]
        w3 = mW[c3, k]
        a00 = a00 + x0 * w0
        a01 = a01 + x0 * w1
        a02 = a02 + x0 * w2
        a03 = a03 + x0 * w3
        a10 = a10 + x1 * w0
        a11 = a11 + x1 * w1
        a12 = a12 + x1 * w2
        a13 = a13 + x1 * w3
    sums = ((warp_sum(a00), warp_sum(a01), warp_sum(a02), warp_sum(a03)),
            (warp_sum(a10), warp_sum(a11), warp_sum(a12), warp_sum(a13)))
    zero = cutlass.Float32(0.0)
    # lane j (j < 8) stores output (j // 4, j % 4) of the warp's block; the tuple is indexed at trace time
    for i in cutlass.range_constexpr(WARP_ROWS):
        for j in cutlass.range_constexpr(WARP_COLS):
            if lane == i * WARP_COLS + j:
                if m0 + i < M:
                    if n0 + j < N:
                        mOut[m0 + i, n0 + j] = cute.arch.fmax(sums[i][j] + mB[n0 + j], zero)


@cute.jit
def matmul_bias_relu(mX: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mOut: cute.Tensor, M: cutlass.Int32,
                     N: cutlass.Int32, K: cutlass.Int32, stream: cuda_driver.CUstream):
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    matmul_bias_relu_kernel(mX, mW, mB, mOut, M, N, K).launch(
        grid=[grid_n, grid_m, 1], block=[BLOCK_WARPS_M * BLOCK_WARPS_N * 32, 1, 1], stream=stream)


_COMPILED = {}   # the compiled host function, built on the first call (its layouts are dynamic: any shape)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()   # DLPack does not export tensors that require grad
        bias = self.bias.detach().contiguous()
        M, K = x.shape
        N = weight.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        if max(x.numel(), weight.numel(), out.numel()) >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        args = (from_dlpack(x).mark_layout_dynamic(leading_dim=1), from_dlpack(weight).mark_layout_dynamic(leading_dim=1),
                from_dlpack(bias).mark_layout_dynamic(leading_dim=0), from_dlpack(out).mark_layout_dynamic(leading_dim=1),
                M, N, K, cuda_driver.CUstream(torch.cuda.current_stream(x.device).cuda_stream))
        if "matmul_bias_relu" not in _COMPILED:
            _COMPILED["matmul_bias_relu"] = cute.compile(matmul_bias_relu, *args)
        _COMPILED["matmul_bias_relu"](*args)
        return out
