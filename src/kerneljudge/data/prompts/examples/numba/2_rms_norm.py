import math

import numba
import numpy
import torch
import torch.nn as nn
from numba import cuda

THREADS = 256
WARPS = THREADS // 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def rms_norm_kernel(x, w, out, eps):
    # One block per row: each thread sums the squares of a strided slice of the row, the block adds the
    # partial sums (warp shuffles, then one value per warp through shared memory), and each thread scales
    # its slice.
    warp_sums = cuda.shared.array(WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    acc = numba.float32(0.0)
    for c in range(tid, cols, THREADS):
        v = x[row, c]
        acc += v * v
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if tid % 32 == 0:
        warp_sums[tid // 32] = acc
    cuda.syncthreads()
    if tid < 32:
        total = numba.float32(0.0)
        if tid < WARPS:
            total = warp_sums[tid]
        offset = 16
        while offset > 0:
            total += cuda.shfl_down_sync(FULL_MASK, total, offset)
            offset //= 2
        if tid == 0:
            warp_sums[0] = total
    cuda.syncthreads()
    scale = numba.float32(1.0) / math.sqrt(warp_sums[0] / numba.float32(cols) + eps)
    for c in range(tid, cols, THREADS):
        out[row, c] = x[row, c] * scale * w[c]


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
        weight = self.weight.detach().contiguous()   # tensors that require grad cannot be exported
        out = torch.empty_like(rows)
        if rows.shape[0] == 0 or cols == 0:
            return out.reshape(x.shape)
        if rows.shape[0] >= 2**31:
            raise ValueError("too many rows for one grid")
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        rms_norm_kernel[rows.shape[0], THREADS, stream](
            cuda.as_cuda_array(rows), cuda.as_cuda_array(weight), cuda.as_cuda_array(out), numpy.float32(self.eps))
        return out.reshape(x.shape)
