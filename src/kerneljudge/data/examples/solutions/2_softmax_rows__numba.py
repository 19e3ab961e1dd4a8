# expect: correct
# needs: cuda,numba
# problem: 2_softmax_rows.py
# why: numba-cuda @cuda.jit kernel, one block of 256 threads per row: an online pass (running max and rescaled sum of exp per thread), block max and sum through warp shuffles and shared memory, then the write; any width; torch memory through cuda.as_cuda_array, launched on the caller's torch stream through cuda.external_stream
import math

import numba
import torch
import torch.nn as nn
from numba import cuda

THREADS = 256
WARPS = THREADS // 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def block_max(v, scratch):
    # every lane of a warp gets the warp's max (butterfly), one value per warp goes through shared memory,
    # and every thread reads back the max of those
    offset = 16
    while offset > 0:
        v = max(v, cuda.shfl_xor_sync(FULL_MASK, v, offset))
        offset //= 2
    tid = cuda.threadIdx.x
    if tid % 32 == 0:
        scratch[tid // 32] = v
    cuda.syncthreads()
    total = scratch[0]
    for w in range(1, WARPS):
        total = max(total, scratch[w])
    cuda.syncthreads()   # scratch is reused by the next reduction
    return total


@cuda.jit(device=True)
def block_sum(v, scratch):
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL_MASK, v, offset)
        offset //= 2
    tid = cuda.threadIdx.x
    if tid % 32 == 0:
        scratch[tid // 32] = v
    cuda.syncthreads()
    total = scratch[0]
    for w in range(1, WARPS):
        total += scratch[w]
    cuda.syncthreads()
    return total


@cuda.jit
def softmax_rows_kernel(x, out):
    scratch = cuda.shared.array(WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    # running max starts at the row's first element (every row has one), so no -inf is needed
    m = x[row, 0]
    s = numba.float32(0.0)
    for c in range(tid, cols, THREADS):
        v = x[row, c]
        m_new = max(m, v)
        s = s * math.exp(m - m_new) + math.exp(v - m_new)
        m = m_new
    row_max = block_max(m, scratch)
    row_sum = block_sum(s * math.exp(m - row_max), scratch)
    inv = numba.float32(1.0) / row_sum
    for c in range(tid, cols, THREADS):
        out[row, c] = math.exp(x[row, c] - row_max) * inv


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows = x.shape[0]
        stream = cuda.external_stream(torch.cuda.current_stream(x.device).cuda_stream)
        softmax_rows_kernel[rows, THREADS, stream](cuda.as_cuda_array(x), cuda.as_cuda_array(out))
        return out
