# expect: correct
# needs: cuda,cupy
# problem: 4_matmul_bias_relu.py
# why: CuPy RawModule (NVRTC), 16x16 shared-memory tiles of x and weight, bias and ReLU fused into the store; full fp32; zero-copy through DLPack, launched on the caller's torch stream (cupy.cuda.ExternalStream)
import math

import cupy
import numpy
import torch
import torch.nn as nn

# 16x16 output tiles, operands staged through shared memory 16 columns of K at a time; full fp32
MATMUL_BIAS_RELU_SRC = r"""
#define TILE 16
extern "C" __global__ void matmul_bias_relu(const float* __restrict__ x, const float* __restrict__ w,
                                            const float* __restrict__ bias, float* __restrict__ out,
                                            int M, int N, int K) {
  __shared__ float xs[TILE][TILE + 1];
  __shared__ float ws[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y;   // of x and out
  const int col = blockIdx.x * TILE + threadIdx.x;   // of out (a row of w)
  const int w_row = blockIdx.x * TILE + threadIdx.y;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int k = k0 + threadIdx.x;
    xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[(long long)row * K + k] : 0.0f;
    ws[threadIdx.y][threadIdx.x] = (w_row < N && k < K) ? w[(long long)w_row * K + k] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk) acc += xs[threadIdx.y][kk] * ws[threadIdx.x][kk];
    __syncthreads();
  }
  if (row < M && col < N) {
    const float v = acc + bias[col];
    out[(long long)row * N + col] = v > 0.0f ? v : 0.0f;
  }
}
"""

_MODULE = cupy.RawModule(code=MATMUL_BIAS_RELU_SRC)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        M, K = x.shape
        N = weight.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        grid = ((N + 15) // 16, (M + 15) // 16)
        with cupy.cuda.ExternalStream(torch.cuda.current_stream(x.device).cuda_stream):
            args = (cupy.from_dlpack(x), cupy.from_dlpack(weight), cupy.from_dlpack(bias), cupy.from_dlpack(out),
                    numpy.int32(M), numpy.int32(N), numpy.int32(K))
            kernel = _MODULE.get_function("matmul_bias_relu")
            kernel(grid, (16, 16), args)
        return out
