# expect: correct
# needs: cuda,numba
# problem: 3_layernorm.py
# why: numba-cuda @cuda.jit kernel, one block of 256 threads per row: two-pass mean and variance (block sums through warp shuffles and shared memory), then the affine write; torch memory through cuda.as_cuda_array, launched on the caller's torch stream through cuda.external_stream
import math

import numba
import numpy
import torch
import torch.nn as nn
from numba import cuda

THREADS = 256
WARPS = THREADS // 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def block_sum(v, scratch):
    # every lane of a warp gets the warp's sum (butterfly), one value per warp goes through shared memory,
    # and every thread adds those up
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
    cuda.syncthreads()   # scratch is reused by the next reduction
    return total


@cuda.jit
def layer_norm_kernel(x, weight, bias, out, eps):
    scratch = cuda.shared.array(WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    n = numba.float32(cols)
    acc = numba.float32(0.0)
    for c in range(tid, cols, THREADS):
        acc += x[row, c]
    mean = block_sum(acc, scratch) / n
    acc = numba.float32(0.0)
    for c in range(tid, cols, THREADS):
        d = x[row, c] - mean
        acc += d * d
    rstd = numba.float32(1.0) / math.sqrt(block_sum(acc, scratch) / n + eps)
    for c in range(tid, cols, THREADS):
        out[row, c] = (x[row, c] - mean) * rstd * weight[c] + bias[c]


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows = x.shape[0]
        stream = cuda.external_stream(torch.cuda.current_stream(x.device).cuda_stream)
        layer_norm_kernel[rows, THREADS, stream](cuda.as_cuda_array(x), cuda.as_cuda_array(weight),
                                                 cuda.as_cuda_array(bias), cuda.as_cuda_array(out),
                                                 numpy.float32(self.eps))
        return out
