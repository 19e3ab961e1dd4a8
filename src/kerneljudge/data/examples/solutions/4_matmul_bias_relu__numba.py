# expect: correct
# needs: cuda,numba
# problem: 4_matmul_bias_relu.py
# why: numba-cuda @cuda.jit kernel, 16x16 output tiles with x and weight staged through shared memory 16 columns of K at a time, bias and ReLU fused into the store; full fp32; torch memory through cuda.as_cuda_array, launched on the caller's torch stream through cuda.external_stream
import math

import numba
import torch
import torch.nn as nn
from numba import cuda

TILE = 16


@cuda.jit
def matmul_bias_relu_kernel(x, w, bias, out):
    # out[row, col] = relu(sum_k x[row, k] * w[col, k] + bias[col]); the weight tile is stored as read (rows of
    # w), padded by one column so that reading it along its first index does not hit one shared-memory bank
    xs = cuda.shared.array((TILE, TILE + 1), numba.float32)
    ws = cuda.shared.array((TILE, TILE + 1), numba.float32)
    M, K = x.shape
    N = w.shape[0]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    w_row = cuda.blockIdx.x * TILE + ty
    acc = numba.float32(0.0)
    for k0 in range(0, K, TILE):
        k = k0 + tx
        if row < M and k < K:
            xs[ty, tx] = x[row, k]
        else:
            xs[ty, tx] = numba.float32(0.0)
        if w_row < N and k < K:
            ws[ty, tx] = w[w_row, k]
        else:
            ws[ty, tx] = numba.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += xs[ty, kk] * ws[tx, kk]
        cuda.syncthreads()
    if row < M and col < N:
        v = acc + bias[col]
        out[row, col] = v if v > numba.float32(0.0) else numba.float32(0.0)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        M = x.shape[0]
        N = weight.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
        stream = cuda.external_stream(torch.cuda.current_stream(x.device).cuda_stream)
        matmul_bias_relu_kernel[grid, (TILE, TILE), stream](cuda.as_cuda_array(x), cuda.as_cuda_array(weight),
                                                             cuda.as_cuda_array(bias), cuda.as_cuda_array(out))
        return out
